-- One row per task seen in task_events, in ONE scan of task_events: when it
-- was first scheduled, how it ended, and what happened before. Shared by
-- `job_candidates`, `task_outcomes` and `checkpoint_features`.
-- A task's lifecycle is its first life in the mirror: from its first SCHEDULE to
-- the first FINISH after it (evictions and failures in between are part of it).
-- A task index that FINISHes and is submitted and scheduled again (the real
-- trace has such re-runs) keeps its first life; the later SCHEDULEs are counted
-- in `reruns`.
-- Final state = the last terminal event (EVICT 2, FAIL 3, FINISH 4, KILL 5,
-- LOST 6) of that life by time; ties broken by the larger event type (deterministic);
-- final_event_us is its time (when the task ended, however it ended).
-- EVICT / FAIL times are kept (NULL when none, the common case) so that the
-- features can count them as of any checkpoint without reading the events again.
-- Window edges (stg_task_event_parts): a FINISH before the first SCHEDULE with a
-- part missing before it means the SCHEDULE lies outside the mirror
-- ('schedule_not_in_mirror'); a life whose SCHEDULE and FINISH have a missing
-- part between them may have lost events ('lifecycle_spans_gap'). Both are
-- counted and kept out of the latency tables. The same FINISH before SCHEDULE
-- with no part missing before it is a genuine time inversion ('time_backwards':
-- a located error, or quarantined).
WITH events AS (
    SELECT
        job_id, task_index, time, event_type, priority,
        regexp_extract(filename, 'part-(\d+)-of-\d+\.csv\.gz$$', 1)::INTEGER  AS part_no,
        min(time) FILTER (WHERE event_type = 1) OVER task                    AS first_schedule_us
    FROM stg_task_events
    WHERE ${job_slice}   -- a slice of jobs (bounded memory: stragglers/warehouse/build.py job_slices)
    WINDOW task AS (PARTITION BY job_id, task_index)
),
lives AS (
    SELECT *,
        min(time) FILTER (WHERE event_type = 4 AND time >= first_schedule_us) OVER task AS life_finish_us
    FROM events
    WINDOW task AS (PARTITION BY job_id, task_index)
),
per_task AS (
    SELECT
        job_id,
        task_index AS task_id,
        min(time) FILTER (WHERE event_type = 0)                  AS first_submit_us,
        any_value(first_schedule_us)                             AS first_schedule_us,
        any_value(life_finish_us)                                AS final_finish_us,
        arg_max(event_type, {'t': time, 'e': event_type})
            FILTER (WHERE event_type BETWEEN 2 AND 6
                    AND (life_finish_us IS NULL OR time <= life_finish_us)) AS final_event,
        max(time) FILTER (WHERE event_type BETWEEN 2 AND 6
                          AND (life_finish_us IS NULL OR time <= life_finish_us)) AS final_event_us,
        max(priority)                                            AS max_priority,
        coalesce(bool_or(priority BETWEEN 9 AND 11), false)      AS production_priority,
        list(time ORDER BY time) FILTER (WHERE event_type = 2)   AS evict_times,
        list(time ORDER BY time) FILTER (WHERE event_type = 3)   AS fail_times,
        count(*) FILTER (WHERE event_type = 1 AND time > life_finish_us) AS reruns,
        min(time) FILTER (WHERE event_type = 4 AND time < first_schedule_us) AS finish_before_schedule_us,
        min(part_no)                                             AS first_part,
        min(part_no) FILTER (WHERE event_type = 1 AND time = first_schedule_us) AS schedule_part,
        min(part_no) FILTER (WHERE event_type = 4 AND time = life_finish_us)    AS finish_part
    FROM lives
    GROUP BY job_id, task_index
),
edges AS (
    SELECT t.*,
        -- parts present in [0, first_part) and in [schedule_part, finish_part]: fewer than the span = a gap
        (SELECT count(*) FROM stg_task_event_parts p WHERE p.part_no < t.first_part) < t.first_part
            AS part_missing_before,
        (SELECT count(*) FROM stg_task_event_parts p WHERE p.part_no BETWEEN t.schedule_part AND t.finish_part)
            < t.finish_part - t.schedule_part + 1 AS part_missing_within
    FROM per_task t
)
SELECT
    '${trace}' AS trace,
    job_id, task_id, first_submit_us, first_schedule_us, final_finish_us, final_event, final_event_us,
    max_priority, production_priority,
    evict_times, fail_times,
    -- evictions and failures before the final FINISH (all of them if none)
    coalesce(len(list_filter(evict_times, x -> final_finish_us IS NULL OR x < final_finish_us)), 0) AS evictions,
    coalesce(len(list_filter(fail_times, x -> final_finish_us IS NULL OR x < final_finish_us)), 0)  AS failures,
    CASE
        WHEN first_schedule_us IS NULL                THEN 'never_scheduled'
        WHEN first_schedule_us = 0                    THEN 'scheduled_before_window'
        -- window edges: counted, not timed
        WHEN finish_before_schedule_us IS NOT NULL AND part_missing_before THEN 'schedule_not_in_mirror'
        -- malformed (quarantined by on_bad_rows=quarantine; `fail` stops before)
        WHEN finish_before_schedule_us IS NOT NULL    THEN 'time_backwards'
        WHEN final_finish_us IS NOT NULL AND part_missing_within THEN 'lifecycle_spans_gap'
        WHEN final_event IS NULL                      THEN 'still_running'
        WHEN final_event = 5                          THEN 'killed'
        WHEN final_event = 6                          THEN 'lost'
        WHEN final_event = 3                          THEN 'failed'
        WHEN final_event = 2                          THEN 'evicted'
        WHEN final_finish_us = 9223372036854775807    THEN 'finished_after_window'
        ELSE 'finished'
    END AS end_state,
    reruns, finish_before_schedule_us
FROM edges
