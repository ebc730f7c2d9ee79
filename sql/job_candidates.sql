-- Every job of the trace (from job_events and task_events) with what the
-- selection rules need. `jobs` and `selection_funnel` read it.
-- Rule `max_class` (default, as the paper's released preprocessing): the
-- largest scheduling class over the job's job_events rows is >= 1.
-- Rule `priority`: any of its tasks has priority 9, 10 or 11.
CREATE OR REPLACE VIEW job_candidates AS
WITH job_class AS (
    SELECT job_id,
        max(scheduling_class)               AS max_scheduling_class,
        arg_min(scheduling_class, time)     AS first_scheduling_class,
        any_value(job_name)                 AS job_name
    FROM stg_job_events
    GROUP BY job_id
),
job_tasks AS (
    SELECT job_id,
        count(*)                                        AS n_tasks,
        count(*) FILTER (WHERE end_state = 'finished')  AS n_finished,
        max(max_priority)                               AS max_priority,
        bool_or(production_priority)                    AS production_priority
    FROM task_lifecycle
    WHERE trace = '${trace}'
    GROUP BY job_id
)
SELECT
    job_id,
    coalesce(t.n_tasks, 0)      AS n_tasks,
    coalesce(t.n_finished, 0)   AS n_finished,
    c.max_scheduling_class,
    c.first_scheduling_class,
    c.job_name,
    t.max_priority,
    coalesce(t.production_priority, false) AS production_priority,
    CASE '${production_rule}'
        WHEN 'max_class' THEN coalesce(c.max_scheduling_class, -1) >= 1
        WHEN 'priority'  THEN coalesce(t.production_priority, false)
    END AS is_production
FROM job_class c
FULL OUTER JOIN job_tasks t USING (job_id);
