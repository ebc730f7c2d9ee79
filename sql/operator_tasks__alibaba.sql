-- The operator's tasks of an Alibaba trace: the instances of `tasks` (the batch_instance table
-- gives each kept instance's start and end, not how a dropped one ran), all finished.
SELECT trace, job_id, task_id, first_schedule_us, latency_us, latency_s, true AS finished, 'finished' AS end_state
FROM tasks WHERE trace = '${trace}'
ORDER BY job_id, task_id
