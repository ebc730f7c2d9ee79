-- The checks of every selected job as the replay engine reads them (stragglers/prediction/engine/jobs.py):
-- the operator's online clock after t0 (sql/operator_checkpoints.sql; k = 0 is t0, where no method
-- flags), in seconds on the job's wall clock. Spark event logs are checked every
-- spark.speculation.interval instead (the engine builds those checks from the stage's submission).
SELECT job_id, checkpoint_s
FROM operator_checkpoints
WHERE trace = '${trace}' AND k >= 1
ORDER BY job_id, k
