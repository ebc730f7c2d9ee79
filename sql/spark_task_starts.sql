-- SparkListenerTaskStart in a batch of lines (spark_batch_lines), appended to table
-- spark_task_starts (times: ms since the epoch).
SELECT log_id, line,
       json_transform(text, '{"Stage ID": "INTEGER", "Stage Attempt ID": "INTEGER",
           "Task Info": {"Task ID": "BIGINT", "Index": "INTEGER", "Attempt": "INTEGER",
               "Partition ID": "INTEGER", "Launch Time": "BIGINT", "Executor ID": "VARCHAR", "Host": "VARCHAR",
               "Locality": "VARCHAR", "Speculative": "BOOLEAN"}}') AS j
FROM spark_batch_lines
