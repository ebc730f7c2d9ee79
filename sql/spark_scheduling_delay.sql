-- The longest gap, either way, on one executor, between an attempt's recorded end and the next attempt
-- of the same stage attempt launched there while the stage still had tasks to launch (s): how far apart
-- Spark's clock puts a freed core and its next task (stragglers/prediction/copies/spark_copies.py).
WITH lives AS (
    SELECT log_id, stage_id, stage_attempt, executor_id, launch_us, finish_us,
           max(launch_us) OVER (PARTITION BY log_id, stage_id, stage_attempt) AS last_launch_us,
           lead(launch_us) OVER (PARTITION BY log_id, stage_id, stage_attempt, executor_id ORDER BY launch_us)
               AS next_launch_us
    FROM stg_spark_tasks
    WHERE NOT speculative AND finish_us IS NOT NULL
)
SELECT max(abs(next_launch_us - finish_us)) / 1e6 AS delay_s
FROM lives
WHERE next_launch_us IS NOT NULL AND next_launch_us <= last_launch_us
