-- The completion-time simulations' tasks: every finished task of a job the paper's protocol
-- evaluated (job_metrics).
SELECT t.trace, t.job_id, t.task_id, t.latency_s FROM tasks t
SEMI JOIN (SELECT DISTINCT trace, job_id FROM job_metrics) j ON j.trace = t.trace AND j.job_id = t.job_id
