-- Every task of the selected Spark stage attempts (jobs__spark.sql) and how its life ended. A task is
-- a (stage attempt, task index); its lives are its attempts that are not speculative, in order
-- (a failed attempt is re-launched, as a Google task is re-scheduled after a FAIL). A speculative
-- attempt is Spark's own copy, not a task (docs/TRACES.md): when the copy wins, Spark kills the
-- original, which ends 'killed' at that moment (its own life: it has no latency of its own).
-- first_schedule_us: the first life's launch; final_finish_us: the end of the life that succeeded
-- (NULL otherwise); final_event_us: the end of the task's last life however it ended (a life still
-- running when the log ends: the application's end, else the log's last recorded time).
-- outcome: 'finished' (a life succeeded), else the last life's: 'failed', 'killed', 'still_running'.
-- Times in microseconds since the epoch.
WITH lives AS (
    SELECT j.job_id, t.task_index AS task_id, t.attempt, t.launch_us, t.finish_us, t.outcome, t.log_id
    FROM stg_spark_tasks t
    JOIN jobs j ON j.trace = '${trace}' AND j.log_id = t.log_id AND j.stage_id = t.stage_id
               AND j.stage_attempt = t.stage_attempt
    WHERE NOT t.speculative
),
log_end AS (
    SELECT a.log_id, coalesce(a.end_us, max(greatest(t.launch_us, coalesce(t.finish_us, t.launch_us)))) AS end_us
    FROM stg_spark_applications a JOIN stg_spark_tasks t USING (log_id)
    GROUP BY a.log_id, a.end_us
),
task AS (
    SELECT job_id, task_id, any_value(log_id) AS log_id,
        min(launch_us)                                                  AS first_schedule_us,
        min(finish_us) FILTER (WHERE outcome = 'success')               AS success_us,
        arg_max(outcome, attempt)                                       AS last_outcome,
        arg_max(finish_us, attempt)                                     AS last_finish_us,
        count(*) FILTER (WHERE outcome = 'failed')                      AS failed_lives
    FROM lives
    GROUP BY job_id, task_id
)
SELECT
    '${trace}'                                  AS trace,
    t.job_id,
    t.task_id,
    t.first_schedule_us,
    t.success_us                                AS final_finish_us,
    greatest(t.first_schedule_us, CASE WHEN t.success_us IS NOT NULL THEN t.success_us
                                       WHEN t.last_outcome = 'running' THEN e.end_us
                                       ELSE t.last_finish_us END) AS final_event_us,
    0::BIGINT                                   AS evictions,
    t.failed_lives::BIGINT                      AS failures,
    CASE WHEN t.success_us IS NOT NULL THEN 'finished'
         WHEN t.last_outcome = 'running' THEN 'still_running'
         ELSE t.last_outcome END                AS outcome
FROM task t JOIN log_end e USING (log_id)
ORDER BY t.job_id, t.task_id
