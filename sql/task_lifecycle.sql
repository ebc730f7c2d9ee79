-- One row per task seen in task_events, in ONE scan of task_events: when it
-- was first scheduled, how it ended, and what happened before. Shared by
-- `job_candidates`, `task_outcomes` and `checkpoint_features`.
-- Final state = the last terminal event (EVICT 2, FAIL 3, FINISH 4, KILL 5,
-- LOST 6) by time; ties broken by the larger event type (deterministic).
-- EVICT / FAIL times are kept (NULL when none, the common case) so that the
-- features can count them as of any checkpoint without reading the events again.
WITH per_task AS (
    SELECT
        job_id,
        task_index AS task_id,
        min(time) FILTER (WHERE event_type = 0)                  AS first_submit_us,
        min(time) FILTER (WHERE event_type = 1)                  AS first_schedule_us,
        max(time) FILTER (WHERE event_type = 4)                  AS final_finish_us,
        arg_max(event_type, {'t': time, 'e': event_type})
            FILTER (WHERE event_type BETWEEN 2 AND 6)            AS final_event,
        max(priority)                                            AS max_priority,
        coalesce(bool_or(priority BETWEEN 9 AND 11), false)      AS production_priority,
        list(time ORDER BY time) FILTER (WHERE event_type = 2)   AS evict_times,
        list(time ORDER BY time) FILTER (WHERE event_type = 3)   AS fail_times
    FROM stg_task_events
    GROUP BY job_id, task_index
)
SELECT
    '${trace}' AS trace,
    job_id, task_id, first_submit_us, first_schedule_us, final_finish_us, final_event, max_priority, production_priority,
    evict_times, fail_times,
    -- evictions and failures before the final FINISH (all of them if none)
    coalesce(len(list_filter(evict_times, x -> final_finish_us IS NULL OR x < final_finish_us)), 0) AS evictions,
    coalesce(len(list_filter(fail_times, x -> final_finish_us IS NULL OR x < final_finish_us)), 0)  AS failures,
    CASE
        WHEN first_schedule_us IS NULL                THEN 'never_scheduled'
        WHEN first_schedule_us = 0                    THEN 'scheduled_before_window'
        WHEN final_event IS NULL                      THEN 'still_running'
        WHEN final_event = 5                          THEN 'killed'
        WHEN final_event = 6                          THEN 'lost'
        WHEN final_event = 3                          THEN 'failed'
        WHEN final_event = 2                          THEN 'evicted'
        WHEN final_finish_us = 9223372036854775807    THEN 'finished_after_window'
        -- malformed (quarantined by on_bad_rows=quarantine; `fail` stops before)
        WHEN final_finish_us < first_schedule_us      THEN 'time_backwards'
        ELSE 'finished'
    END AS end_state
FROM per_task
