-- Which stage attempt of which log each job of a Spark trace is (jobs__spark.sql numbers them): what
-- the replay of Spark's rule reports its copies against (stragglers/prediction/copies/spark_copies.py).
SELECT job_id, app_id, log_id, stage_id, stage_attempt
FROM jobs
WHERE trace = '${trace}'
ORDER BY job_id
