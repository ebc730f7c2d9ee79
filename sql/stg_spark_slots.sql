-- Each application's slots over time, a step function: from at_us on (until the next row), the
-- application has ``slots`` cores, those of its executors alive then (from ExecutorAdded until
-- ExecutorRemoved; an executor never removed counts to the log's end). Times in microseconds.
CREATE OR REPLACE TABLE stg_spark_slots AS
WITH changes AS (
    SELECT app_id, log_id, added_us AS at_us, cores AS delta FROM stg_spark_executors
    UNION ALL
    SELECT app_id, log_id, removed_us, -cores FROM stg_spark_executors WHERE removed_us IS NOT NULL
)
SELECT app_id, log_id, at_us, sum(sum(delta)) OVER (PARTITION BY log_id ORDER BY at_us) AS slots
FROM changes
GROUP BY app_id, log_id, at_us
ORDER BY log_id, at_us;
