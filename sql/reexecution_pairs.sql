-- One row per task whose first life FINISHed and that was scheduled again (task_lifecycle.reruns > 0,
-- every job, not only the selected ones): its two lives, the machines they finished on, its job's
-- median and ${quantile} quantile of first-life latencies, and whether it is a re-execution pair.
-- First life: as task_lifecycle defines it (first SCHEDULE to the first FINISH after it; evictions
-- and failures in between are part of it). Second life: the next SCHEDULE after that FINISH to the
-- first FINISH after it (evictions and failures in between are part of it too). A life's machine is
-- the machine its FINISH ran on. Latencies and gap_s (first FINISH -> second SCHEDULE) in seconds.
-- status = 'pair' when both lives are timed on different machines; else why not (counted, kept here):
--   first_life_not_timed     the first life ends otherwise than 'finished' in task_lifecycle (window
--                            edge, a missing part inside it, ...): no first latency
--   second_life_unfinished   no FINISH after the second SCHEDULE in the mirror (killed, failed,
--                            evicted for good, or still running at its end)
--   second_life_spans_gap    a task_events part is missing between its SCHEDULE and its FINISH
--   zero_latency             a life of 0 us (no relative log-latency)
--   same_machine             both lives finished on the same machine (not what a copy elsewhere gets)
--   job_too_few_finished     the job has fewer than ${min_finished} timed first lives (no median)
WITH rerun AS (
    SELECT job_id, task_id, first_schedule_us, final_finish_us, end_state
    FROM task_lifecycle
    WHERE trace = '${trace}' AND reruns > 0
),
events AS (
    SELECT e.job_id, e.task_index AS task_id, e.time, e.event_type, e.machine_id, r.final_finish_us,
        regexp_extract(e.filename, 'part-(\d+)-of-\d+\.csv\.gz$$', 1)::INTEGER AS part_no
    FROM stg_task_events e
    JOIN rerun r ON e.job_id = r.job_id AND e.task_index = r.task_id
    -- a FINISH at 2^63-1 is after the window: not a timed end
    WHERE e.event_type IN (1, 4) AND e.time < 9223372036854775807
),
second_start AS (
    SELECT job_id, task_id,
        min(time) FILTER (WHERE event_type = 1 AND time > final_finish_us) AS second_schedule_us,
        arg_min(machine_id, time) FILTER (WHERE event_type = 4 AND time = final_finish_us) AS first_machine
    FROM events
    GROUP BY job_id, task_id
),
second_life AS (
    SELECT s.job_id, s.task_id, s.first_machine, s.second_schedule_us,
        min(e.time) FILTER (WHERE e.event_type = 4 AND e.time >= s.second_schedule_us)            AS second_finish_us,
        arg_min(e.machine_id, e.time) FILTER (WHERE e.event_type = 4 AND e.time >= s.second_schedule_us)
                                                                                                   AS second_machine,
        min(e.part_no) FILTER (WHERE e.event_type = 1 AND e.time = s.second_schedule_us)           AS schedule_part,
        arg_min(e.part_no, e.time) FILTER (WHERE e.event_type = 4 AND e.time >= s.second_schedule_us)
                                                                                                   AS finish_part
    FROM second_start s
    JOIN events e USING (job_id, task_id)
    GROUP BY s.job_id, s.task_id, s.first_machine, s.second_schedule_us
),
job_latency AS (
    SELECT job_id,
        count(*)                                                                 AS job_finished,
        median(final_finish_us - first_schedule_us) / 1e6                        AS job_median_s,
        quantile_cont(final_finish_us - first_schedule_us, ${quantile}) / 1e6    AS job_tau_s
    FROM task_lifecycle
    WHERE trace = '${trace}' AND end_state = 'finished' AND job_id IN (SELECT job_id FROM rerun)
    GROUP BY job_id
),
joined AS (
    SELECT r.job_id, r.task_id, r.first_schedule_us,
        CASE WHEN r.end_state = 'finished' THEN (r.final_finish_us - r.first_schedule_us) / 1e6 END AS first_latency_s,
        (l.second_finish_us - l.second_schedule_us) / 1e6                       AS second_latency_s,
        (l.second_schedule_us - r.final_finish_us) / 1e6                        AS gap_s,
        l.first_machine, l.second_machine,
        coalesce(j.job_finished, 0)                                              AS job_finished,
        j.job_median_s, j.job_tau_s, r.end_state AS first_end_state,
        (SELECT count(*) FROM stg_task_event_parts p WHERE p.part_no BETWEEN l.schedule_part AND l.finish_part)
            < l.finish_part - l.schedule_part + 1                                AS second_part_missing
    FROM rerun r
    JOIN second_life l USING (job_id, task_id)
    LEFT JOIN job_latency j USING (job_id)
)
SELECT
    '${trace}' AS trace,
    job_id, task_id, first_schedule_us, first_latency_s, second_latency_s, gap_s, first_machine, second_machine,
    job_finished, job_median_s, job_tau_s,
    CASE
        WHEN first_end_state <> 'finished'                  THEN 'first_life_not_timed'
        WHEN second_latency_s IS NULL                       THEN 'second_life_unfinished'
        WHEN second_part_missing                            THEN 'second_life_spans_gap'
        WHEN first_latency_s <= 0 OR second_latency_s <= 0  THEN 'zero_latency'
        WHEN first_machine = second_machine                 THEN 'same_machine'
        WHEN job_finished < ${min_finished}                 THEN 'job_too_few_finished'
        ELSE 'pair'
    END AS status
FROM joined
ORDER BY job_id, task_id
