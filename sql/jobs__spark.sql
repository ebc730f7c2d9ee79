-- Spark event logs (docs/TRACES.md, "Spark event logs: the learned methods' chain"): a job of this
-- project is a stage attempt (a TaskSet) of the staged logs (stg_spark_stages) with at least
-- ${min_tasks} tasks that completed before its log stopped (stg_spark_stages.selected). job_id numbers them in the order Spark submitted them (then by application,
-- stage and attempt: a total order), so earlier jobs have smaller ids, as on the other traces.
-- n_tasks is the TaskSet's size ("Number of Tasks"), n_finished its tasks that succeeded;
-- job_name is the application, task_name the stage attempt ('<stage>.<attempt> <stage name>').
-- The Google/Alibaba columns Spark has no counterpart for are NULL.
WITH stage AS (
    SELECT s.*, (SELECT count(DISTINCT t.task_index) FROM stg_spark_tasks t
                 WHERE t.log_id = s.log_id AND t.stage_id = s.stage_id AND t.stage_attempt = s.stage_attempt
                   AND t.outcome = 'success') AS n_finished
    FROM stg_spark_stages s
    WHERE s.selected
)
SELECT
    '${trace}'                  AS trace,
    row_number() OVER (ORDER BY submitted_us NULLS LAST, app_id, stage_id, stage_attempt)::BIGINT AS job_id,
    tasks::BIGINT               AS n_tasks,
    n_finished::BIGINT          AS n_finished,
    NULL::INTEGER               AS max_scheduling_class,
    NULL::INTEGER               AS first_scheduling_class,
    NULL::INTEGER               AS max_priority,
    NULL::BOOLEAN               AS production_priority,
    'stage_attempt'             AS production_rule,
    ${min_tasks}                AS min_tasks,
    app_id                      AS job_name,
    stage_id || '.' || stage_attempt || ' ' || coalesce(stage_name, '') AS task_name,
    app_id,
    log_id,
    stage_id,
    stage_attempt,
    submitted_us                AS stage_submitted_us
FROM stage
ORDER BY job_id
