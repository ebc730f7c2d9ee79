-- The Spark properties each kept application ran with (SparkListenerEnvironmentUpdate), by log: what
-- the engine reads the application's speculation interval from, and the operator's answer the setting
-- it runs now (stragglers/prediction/engine/spark_rule.py rule_from_conf).
SELECT log_id, app_id, spark_properties
FROM stg_spark_applications
WHERE kept
ORDER BY log_id
