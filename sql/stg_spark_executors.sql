-- One row per executor of the kept logs (SparkListenerExecutorAdded / ExecutorRemoved): its host
-- (a machine of this project), its cores (the application's slots over time are the cores of the
-- executors alive then), when it came and went (removed_us NULL: alive when the log ends), and
-- why it went. A local-mode application has no such event (its tasks run on executor 'driver').
-- Times in microseconds since the epoch.
CREATE OR REPLACE TABLE stg_spark_executors AS
WITH kept AS (
    SELECT e.log_id, e.j.Event = 'SparkListenerExecutorAdded' AS added, e.j FROM spark_executor_events e
    JOIN stg_spark_applications a ON a.log_id = e.log_id AND a.kept
), added AS (
    SELECT log_id, j."Executor ID" AS executor_id, j."Executor Info"."Host" AS host,
           j."Executor Info"."Total Cores" AS cores, j."Timestamp" * 1000 AS added_us
    FROM kept WHERE added
), removed AS (
    SELECT log_id, j."Executor ID" AS executor_id, j."Timestamp" * 1000 AS removed_us,
           j."Removed Reason" AS removed_reason
    FROM kept WHERE NOT added
)
SELECT a.app_id, ad.log_id, ad.executor_id, ad.host, ad.cores, ad.added_us, r.removed_us, r.removed_reason
FROM added ad
LEFT JOIN removed r USING (log_id, executor_id)
JOIN stg_spark_applications a ON a.log_id = ad.log_id
ORDER BY ad.log_id, ad.added_us, ad.executor_id;
