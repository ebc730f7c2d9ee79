-- The application's own events in a batch of lines (spark_batch_lines: the lines of these events
-- among one file's consecutive lines, each already checked to be JSON, given by
-- stragglers/warehouse/spark_staging.py), appended to table
-- spark_app_events: the log's Spark version, the application's start (id, attempt, name, user) and
-- end, and the Spark properties it ran with. Times: ms since the epoch, as Spark writes them.
SELECT log_id, line,
       json_transform(text, '{"Event": "VARCHAR", "Spark Version": "VARCHAR", "App ID": "VARCHAR",
           "App Attempt ID": "VARCHAR", "App Name": "VARCHAR", "User": "VARCHAR", "Timestamp": "BIGINT"}') AS j,
       CASE WHEN starts_with(text, '{"Event":"SparkListenerEnvironmentUpdate"')
            THEN json_extract(text, '$$."Spark Properties"') END AS spark_properties
FROM spark_batch_lines
