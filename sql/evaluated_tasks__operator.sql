-- As evaluated_tasks.sql, with the operator's protocol too: the tasks of every job either protocol
-- evaluated (a job without predictions of a method is not simulated for it, so the paper's
-- completion table does not change).
SELECT t.trace, t.job_id, t.task_id, t.latency_s FROM tasks t
SEMI JOIN (SELECT trace, job_id FROM job_metrics UNION SELECT trace, job_id FROM operator_job_metrics) j
ON j.trace = t.trace AND j.job_id = t.job_id
