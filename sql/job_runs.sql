-- Every job of job_events (one row per job): its first submit, its end (NULL: not ended), its
-- logical name and, for an ended job, the median and p90 latency of its first lives finished by
-- its end (all known at its end). The recurring-name stream of event_features.sql (earlier runs
-- of the same logical name) and machine_streams.sql (a machine's history) read these values from
-- the time each job ended, never earlier.
--
-- State per job: runs per slice of job ids (${job_slice}, bounded memory).
-- Inputs: stg_job_events, task_lifecycle.
WITH job_info AS (
    SELECT job_id,
        min(time) FILTER (WHERE event_type BETWEEN 2 AND 6 AND time < 9223372036854775807) AS end_us,
        min(time) FILTER (WHERE event_type = 0)                                         AS submit_us,
        any_value(logical_job_name)                                                     AS logical_job_name
    FROM stg_job_events WHERE ${job_slice} GROUP BY job_id
),
job_latency AS (
    -- an ended job's task latencies, over its tasks finished by its end
    SELECT l.job_id, quantile_cont(l.final_finish_us - l.first_schedule_us, 0.5) AS p50_us,
        quantile_cont(l.final_finish_us - l.first_schedule_us, 0.9) AS p90_us
    FROM task_lifecycle l JOIN job_info e USING (job_id)
    WHERE l.trace = '${trace}' AND ${job_slice} AND e.end_us IS NOT NULL AND l.end_state = 'finished'
      AND l.first_schedule_us > 0 AND l.final_finish_us <= e.end_us
    GROUP BY l.job_id
)
SELECT '${trace}' AS trace, j.job_id, j.submit_us, j.end_us, j.logical_job_name, q.p50_us, q.p90_us
FROM job_info j LEFT JOIN job_latency q USING (job_id)
ORDER BY j.job_id
