-- Alibaba "jobs": tasks (job_name, task_name) with at least ${min_tasks} instances
-- (NURD's filter). Same columns as the Google `jobs`.
SELECT
    '${trace}'                  AS trace,
    job_id,
    n_tasks,
    n_finished,
    NULL::INTEGER               AS max_scheduling_class,
    NULL::INTEGER               AS first_scheduling_class,
    NULL::INTEGER               AS max_priority,
    NULL::BOOLEAN               AS production_priority,
    'instances'                 AS production_rule,
    ${min_tasks}                AS min_tasks,
    job_name,
    task_name
FROM job_candidates
WHERE n_tasks >= ${min_tasks}
ORDER BY job_id
