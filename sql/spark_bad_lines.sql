-- The lines of a batch (spark_batch_lines: one file's consecutive lines, registered by
-- stragglers/warehouse/spark_staging.py) that are not JSON, appended to table spark_bad_lines.
-- unterminated: the file's last line, with no newline after it (a cut log).
SELECT log_id, file, line, unterminated, text
FROM spark_batch_lines
WHERE NOT json_valid(text)
