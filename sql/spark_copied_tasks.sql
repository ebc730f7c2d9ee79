-- How many tasks of the given stage attempts (jobs of a Spark trace; the one parameter, a list of job
-- ids) ran a copy Spark made (a speculative attempt): on logs made with speculation on, what it bought
-- is already in the record the operator's answer replays (stragglers/prediction/verdicts/spark_answer.py).
SELECT count(DISTINCT (j.job_id, t.task_index))
FROM jobs j JOIN stg_spark_tasks t ON t.log_id = j.log_id AND t.stage_id = j.stage_id
                                  AND t.stage_attempt = j.stage_attempt AND t.speculative
WHERE j.trace = '${trace}' AND j.job_id IN (SELECT unnest(?))
