-- The tasks of every selected stage attempt as the replay engine reads them (stragglers/prediction/
-- engine/jobs.py): operator_tasks (start on the job's wall clock, how long the original ran, whether
-- it finished) with the host of its first life (a copy never runs on its original's host), the log it
-- came from, the stage's submission on the job's clock (s, <= 0: Spark's checks count from it) and the
-- last launch of a life that is not a copy (s: until then the stage has tasks to launch, and Spark
-- schedules those before any copy).
WITH first_life AS (
    SELECT j.job_id, t.task_index AS task_id, arg_min(t.host, t.launch_us) AS host
    FROM stg_spark_tasks t
    JOIN jobs j ON j.trace = '${trace}' AND j.log_id = t.log_id AND j.stage_id = t.stage_id
               AND j.stage_attempt = t.stage_attempt
    WHERE NOT t.speculative
    GROUP BY j.job_id, t.task_index
), origin AS (
    SELECT job_id, min(first_schedule_us) AS origin_us FROM operator_tasks WHERE trace = '${trace}' GROUP BY job_id
), last_launch AS (
    SELECT j.job_id, max(t.launch_us) AS last_launch_us
    FROM stg_spark_tasks t
    JOIN jobs j ON j.trace = '${trace}' AND j.log_id = t.log_id AND j.stage_id = t.stage_id
               AND j.stage_attempt = t.stage_attempt
    WHERE NOT t.speculative
    GROUP BY j.job_id
)
SELECT o.job_id, o.task_id, o.start_us / 1e6 AS start_s, o.latency_s, o.finished, o.n_known, f.host, j.log_id,
       (j.stage_submitted_us - g.origin_us) / 1e6 AS submitted_s,
       (l.last_launch_us - g.origin_us) / 1e6 AS last_launch_s,
       g.origin_us
FROM operator_tasks o
JOIN jobs j ON j.trace = o.trace AND j.job_id = o.job_id
JOIN origin g ON g.job_id = o.job_id
JOIN last_launch l ON l.job_id = o.job_id
LEFT JOIN first_life f ON f.job_id = o.job_id AND f.task_id = o.task_id
WHERE o.trace = '${trace}'
ORDER BY o.job_id, o.task_id
