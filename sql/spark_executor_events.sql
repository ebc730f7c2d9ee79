-- SparkListenerExecutorAdded / ExecutorRemoved in a batch of lines (spark_batch_lines), appended to
-- table spark_executor_events (times: ms since the epoch).
SELECT log_id, line,
       json_transform(text, '{"Event": "VARCHAR", "Executor ID": "VARCHAR", "Timestamp": "BIGINT",
           "Removed Reason": "VARCHAR", "Executor Info": {"Host": "VARCHAR", "Total Cores": "INTEGER"}}') AS j
FROM spark_batch_lines
