-- The application's own events in a batch of lines (spark_batch_lines: one file's consecutive lines
-- of these events, registered by stragglers/warehouse/spark_staging.py), appended to table
-- spark_app_events: the log's Spark version, the application's start (id, attempt, name, user) and
-- end, and the Spark properties it ran with. Times: ms since the epoch, as Spark writes them.
-- A line that does not parse is left out (the staging then reports it).
SELECT log_id, line,
       json_transform(text, '{"Event": "VARCHAR", "Spark Version": "VARCHAR", "App ID": "VARCHAR",
           "App Attempt ID": "VARCHAR", "App Name": "VARCHAR", "User": "VARCHAR", "Timestamp": "BIGINT"}') AS j,
       CASE WHEN starts_with(text, '{"Event":"SparkListenerEnvironmentUpdate"')
            THEN json_extract(text, '$$."Spark Properties"') END AS spark_properties
FROM spark_batch_lines
WHERE json_valid(text)
