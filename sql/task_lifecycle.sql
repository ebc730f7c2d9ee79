-- One row per task seen in task_events: when it was first scheduled, how it
-- ended, and what happened before. Shared by `jobs` and `tasks`.
-- Final state = the last terminal event (EVICT 2, FAIL 3, FINISH 4, KILL 5,
-- LOST 6) by time; ties broken by the larger event type (deterministic).
CREATE OR REPLACE VIEW task_lifecycle AS
WITH per_task AS (
    SELECT
        job_id,
        task_index AS task_id,
        min(time) FILTER (WHERE event_type = 1)                  AS first_schedule_us,
        max(time) FILTER (WHERE event_type = 4)                  AS final_finish_us,
        arg_max(event_type, {'t': time, 'e': event_type})
            FILTER (WHERE event_type BETWEEN 2 AND 6)            AS final_event,
        max(priority)                                            AS max_priority,
        coalesce(bool_or(priority BETWEEN 9 AND 11), false)      AS production_priority
    FROM stg_task_events
    GROUP BY job_id, task_index
),
counted AS (
    -- evictions and failures before the final FINISH (all of them if none)
    SELECT e.job_id, e.task_index AS task_id,
        count(*) FILTER (WHERE e.event_type = 2) AS evictions,
        count(*) FILTER (WHERE e.event_type = 3) AS failures
    FROM stg_task_events e
    JOIN per_task p ON p.job_id = e.job_id AND p.task_id = e.task_index
    WHERE e.event_type IN (2, 3)
      AND (p.final_finish_us IS NULL OR e.time < p.final_finish_us)
    GROUP BY e.job_id, e.task_index
)
SELECT
    p.*,
    coalesce(c.evictions, 0) AS evictions,
    coalesce(c.failures, 0)  AS failures,
    CASE
        WHEN p.first_schedule_us IS NULL                THEN 'never_scheduled'
        WHEN p.first_schedule_us = 0                    THEN 'scheduled_before_window'
        WHEN p.final_event IS NULL                      THEN 'still_running'
        WHEN p.final_event = 5                          THEN 'killed'
        WHEN p.final_event = 6                          THEN 'lost'
        WHEN p.final_event = 3                          THEN 'failed'
        WHEN p.final_event = 2                          THEN 'evicted'
        WHEN p.final_finish_us = 9223372036854775807    THEN 'finished_after_window'
        ELSE 'finished'
    END AS end_state
FROM per_task p
LEFT JOIN counted c USING (job_id, task_id);
