-- The operator's tasks of an Alibaba trace: the instances of `tasks` (the batch_instance table
-- gives each kept instance's start and end, not how a dropped one ran), all finished; start_us as in
-- sql/operator_tasks.sql (since the job's earliest start).
SELECT trace, job_id, task_id, first_schedule_us,
    first_schedule_us - min(first_schedule_us) OVER (PARTITION BY job_id) AS start_us, latency_us, latency_s, true AS finished, 'finished' AS end_state,
    count(*) OVER (PARTITION BY job_id) AS n_known   -- a task's instances are known at its submission
FROM tasks WHERE trace = '${trace}'
ORDER BY job_id, task_id
