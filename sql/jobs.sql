-- Production MapReduce-style jobs of one trace (docs/PROTOCOL.md section 2):
-- production by the `${production_rule}` rule (see job_candidates.sql) and
-- parallel: at least ${min_tasks} distinct task indices in task_events.
SELECT
    '${trace}'              AS trace,
    job_id,
    n_tasks,
    n_finished,
    max_scheduling_class,
    first_scheduling_class,
    max_priority,
    production_priority,
    '${production_rule}'    AS production_rule,
    ${min_tasks}            AS min_tasks,
    job_name,
    NULL::VARCHAR           AS task_name
FROM job_candidates
WHERE is_production AND n_tasks >= ${min_tasks}
ORDER BY job_id
