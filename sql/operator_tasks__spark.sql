-- The operator's tasks of a Spark trace: every task of the selected stage attempts that was launched
-- (task_outcomes__spark.sql), however its life ended. start_us is its first launch on the wall
-- clock of its job: microseconds since the job's origin, the earliest first launch of its tasks
-- (Spark submits the stage a few milliseconds before: the scheduler can copy only tasks that run).
-- latency_us is how long the task is seen running: to the life that succeeded, to the end of its
-- last life otherwise (failed; killed, e.g. by Spark's own copy that won; or the log's end while it
-- still runs). Only finished tasks have a latency in the paper's sense.
SELECT
    trace,
    job_id,
    task_id,
    first_schedule_us,
    first_schedule_us - min(first_schedule_us) OVER (PARTITION BY job_id) AS start_us,
    final_event_us - first_schedule_us                  AS latency_us,
    (final_event_us - first_schedule_us) / 1e6          AS latency_s,
    outcome = 'finished'                                AS finished,
    outcome                                             AS end_state,
    -- a stage attempt's task count is known at its submission (Spark's numTasks)
    count(*) OVER (PARTITION BY job_id)                 AS n_known
FROM task_outcomes
WHERE trace = '${trace}'
ORDER BY job_id, task_id
