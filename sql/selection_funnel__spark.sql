-- The selection of a Spark trace, by reason: every stage attempt of the staged logs (a job of this
-- project is one with at least ${min_tasks} tasks), then the tasks of the selected ones by how they
-- ended (task_outcomes__spark.sql). Spark's own speculative copies are counted, not tasks. Counts
-- are coalesced to 0 and cast to BIGINT (sum() of BIGINT is HUGEINT in DuckDB, NULL over no rows).
-- `step` orders the rows; `kept` says whether the row is what goes on.
WITH s AS (SELECT * FROM stg_spark_stages),
launched AS (
    SELECT job_id, count(*) AS n FROM task_outcomes WHERE trace = '${trace}' GROUP BY job_id
)
SELECT '${trace}' AS trace, * FROM (
    SELECT 0 AS step, 'files and lines set aside (table quarantine)' AS stage, 'quarantined' AS reason,
           false AS kept, 0::BIGINT AS jobs, count(*) AS tasks
    FROM quarantine WHERE trace = '${trace}'
    UNION ALL
    SELECT 1, 'all stage attempts (TaskSets) of the kept logs', 'input', true,
           count(*), coalesce(sum(tasks), 0)::BIGINT FROM s
    UNION ALL
    SELECT 5, 'fewer than ${min_tasks} tasks', 'too_few_tasks', false,
           count(*), coalesce(sum(tasks), 0)::BIGINT FROM s WHERE coalesce(tasks, 0) < ${min_tasks}
    UNION ALL
    SELECT 5, 'cut by the end of a log that stops before its application ends (no StageCompleted)',
           'cut_by_log_end', false, count(*), coalesce(sum(tasks), 0)::BIGINT
    FROM s WHERE coalesce(tasks, 0) >= ${min_tasks} AND cut
    UNION ALL
    SELECT 6, 'selected stage attempts', 'selected', true,
           count(*), coalesce(sum(n_tasks), 0)::BIGINT FROM jobs WHERE trace = '${trace}'
    UNION ALL
    SELECT 7, 'tasks of selected stage attempts never launched (the stage ended first)', 'never_launched', false,
           count(*) FILTER (WHERE j.n_tasks > coalesce(l.n, 0)),
           coalesce(sum(j.n_tasks - coalesce(l.n, 0)), 0)::BIGINT
    FROM jobs j LEFT JOIN launched l USING (job_id) WHERE j.trace = '${trace}'
    UNION ALL
    SELECT 7, 'tasks of selected stage attempts: ' || outcome, outcome, outcome = 'finished',
           count(DISTINCT job_id), count(*)
    FROM task_outcomes WHERE trace = '${trace}' GROUP BY outcome
    UNION ALL
    SELECT 7, 'speculative attempts of selected stage attempts (Spark''s own copies: not tasks)',
           'spark_speculative_copies', false, count(DISTINCT j.job_id), count(t.task_id)
    FROM jobs j JOIN stg_spark_tasks t ON t.log_id = j.log_id AND t.stage_id = j.stage_id
                                      AND t.stage_attempt = j.stage_attempt AND t.speculative
    WHERE j.trace = '${trace}'
    UNION ALL
    SELECT 8, 'finished tasks with a latency (tasks)', 'tasks', true,
           count(DISTINCT job_id), count(*) FROM tasks WHERE trace = '${trace}'
)
ORDER BY step, reason
