-- SparkListenerStageSubmitted / StageCompleted in a batch of lines (spark_batch_lines), appended to
-- table spark_stage_events: the "Stage Info" fields the stages read (times: ms since the epoch).
SELECT log_id, line,
       json_transform(text, '{"Event": "VARCHAR", "Stage Info": {"Stage ID": "INTEGER",
           "Stage Attempt ID": "INTEGER", "Stage Name": "VARCHAR", "Number of Tasks": "INTEGER",
           "Submission Time": "BIGINT", "Completion Time": "BIGINT", "Failure Reason": "VARCHAR"}}') AS j
FROM spark_batch_lines
