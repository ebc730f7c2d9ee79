-- Jobs and tasks before and after every filter of the selection, by reason.
-- sum() of BIGINT is HUGEINT in DuckDB (a float in pandas) and NULL over no rows: counts are
-- coalesced to 0 and cast back to BIGINT.
-- `step` orders the rows; `kept` says whether the row is what goes on.
WITH c AS (SELECT * FROM job_candidates)
SELECT '${trace}' AS trace, * FROM (
    SELECT 0 AS step, 'raw rows set aside as malformed (table quarantine)' AS stage, 'quarantined' AS reason,
           false AS kept, count(DISTINCT job_id) AS jobs, count(*) AS tasks
    FROM quarantine WHERE trace = '${trace}'
    UNION ALL
    -- a gap between task_events parts, or a mirror starting after part 0 (a normal situation): the
    -- lifecycles it cuts are counted at step 7 (schedule_not_in_mirror, lifecycle_spans_gap)
    SELECT 0, '${task_event_parts_missing} task_events part numbers missing below the highest present '
              || '(a gap or a later first part)', 'task_event_parts_missing', false, 0, 0
    WHERE ${task_event_parts_missing} > 0
    UNION ALL
    SELECT 1, 'all jobs (job_events or task_events)', 'input', true,
           count(*), coalesce(sum(n_tasks), 0)::BIGINT FROM c
    UNION ALL
    SELECT 2, 'jobs without task events', 'no_task_events', false,
           count(*), 0 FROM c WHERE n_tasks = 0
    UNION ALL
    SELECT 3, 'not production (${production_rule})', 'not_production', false,
           count(*), coalesce(sum(n_tasks), 0)::BIGINT FROM c WHERE n_tasks > 0 AND NOT coalesce(is_production, false)
    UNION ALL
    SELECT 4, 'production jobs', 'production', true,
           count(*), coalesce(sum(n_tasks), 0)::BIGINT FROM c WHERE n_tasks > 0 AND is_production
    UNION ALL
    SELECT 5, 'fewer than ${min_tasks} tasks', 'too_few_tasks', false,
           count(*), coalesce(sum(n_tasks), 0)::BIGINT FROM c WHERE n_tasks > 0 AND is_production AND n_tasks < ${min_tasks}
    UNION ALL
    SELECT 6, 'selected jobs', 'selected', true,
           count(*), coalesce(sum(n_tasks), 0)::BIGINT FROM jobs WHERE trace = '${trace}'
    UNION ALL
    SELECT 7, 'tasks of selected jobs: ' || outcome, outcome, outcome = 'finished',
           count(DISTINCT job_id), count(*)
    FROM task_outcomes WHERE trace = '${trace}' GROUP BY outcome
    UNION ALL
    -- a trace without task_usage (partial mirror): the no_usage exclusion is not applied
    SELECT 7, 'no_usage exclusion not applied: the trace has no task_usage', 'no_usage_not_applied', true,
           count(DISTINCT job_id), count(*)
    FROM task_outcomes WHERE trace = '${trace}' AND outcome = 'finished' AND NOT ${has_usage}
    HAVING NOT ${has_usage}
    UNION ALL
    SELECT 8, 'finished tasks with a latency (tasks)', 'tasks', true,
           count(DISTINCT job_id), count(*) FROM tasks WHERE trace = '${trace}'
)
ORDER BY step, reason
