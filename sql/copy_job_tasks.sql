-- The tasks of every selected job as the replay engine reads them (stragglers/prediction/engine/jobs.py):
-- every task the operator's replay sees (operator_tasks), its start on its job's wall clock and how
-- long its original ran (s), whether it ended by finishing. Google and Alibaba traces: their copies run
-- on machines always free (no host column).
SELECT job_id, task_id, start_us / 1e6 AS start_s, latency_s, finished, n_known
FROM operator_tasks
WHERE trace = '${trace}'
ORDER BY job_id, task_id
