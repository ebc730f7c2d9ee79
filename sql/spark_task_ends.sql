-- SparkListenerTaskEnd in a batch of lines (spark_batch_lines), appended to table spark_task_ends:
-- the attempt, its end reason and the metrics the driver gets at the task's end (times: ms, CPU
-- times ns, sizes bytes).
SELECT log_id, line,
       json_transform(text, '{"Stage ID": "INTEGER", "Stage Attempt ID": "INTEGER", "Task Type": "VARCHAR",
           "Task End Reason": {"Reason": "VARCHAR", "Class Name": "VARCHAR", "Description": "VARCHAR",
               "Kill Reason": "VARCHAR", "Loss Reason": "VARCHAR", "Message": "VARCHAR"},
           "Task Info": {"Task ID": "BIGINT", "Index": "INTEGER", "Attempt": "INTEGER",
               "Partition ID": "INTEGER", "Launch Time": "BIGINT", "Executor ID": "VARCHAR", "Host": "VARCHAR",
               "Locality": "VARCHAR", "Speculative": "BOOLEAN", "Finish Time": "BIGINT",
               "Getting Result Time": "BIGINT"},
           "Task Metrics": {"Executor Deserialize Time": "BIGINT", "Executor Run Time": "BIGINT",
               "Executor CPU Time": "BIGINT", "JVM GC Time": "BIGINT", "Result Size": "BIGINT",
               "Result Serialization Time": "BIGINT", "Peak Execution Memory": "BIGINT",
               "Memory Bytes Spilled": "BIGINT", "Disk Bytes Spilled": "BIGINT",
               "Input Metrics": {"Bytes Read": "BIGINT", "Records Read": "BIGINT"},
               "Output Metrics": {"Bytes Written": "BIGINT", "Records Written": "BIGINT"},
               "Shuffle Read Metrics": {"Remote Bytes Read": "BIGINT", "Local Bytes Read": "BIGINT",
                   "Total Records Read": "BIGINT", "Fetch Wait Time": "BIGINT"},
               "Shuffle Write Metrics": {"Shuffle Bytes Written": "BIGINT",
                   "Shuffle Records Written": "BIGINT", "Shuffle Write Time": "BIGINT"}}}') AS j
FROM spark_batch_lines
