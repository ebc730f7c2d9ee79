-- What was done with each entry of the log directory, one row per entry (docs/TRACES.md, "What is
-- done with each log"): every log read (stg_spark_applications, spark_logs) and every entry not
-- read (spark_not_logs: an unknown codec, a folder that is not a rolling log), written by
-- stragglers/warehouse/spark_staging.py. path is relative to the directory; status as
-- stg_spark_applications says it ('not_a_log' too for an entry not read); used: its application is
-- staged from it; stages_used + stages_left_out = the log's stage attempts (a log skipped leaves
-- out all of its own; a log that stops before its application's end leaves out the attempts cut by
-- its end, stg_spark_stages.cut); done says it in plain words.
CREATE OR REPLACE TABLE spark_log_account AS
WITH logs_read AS (
    SELECT a.log_id, l.entry AS path, a.app_id, a.attempt_id, a.status, a.kept AS used, a.lines, a.bad_lines,
           l.read_error, k.entry AS kept_copy, a.stage_attempts,
           CASE WHEN NOT a.kept THEN 0 WHEN a.complete THEN a.stage_attempts ELSE a.stages_completed END
               AS stages_used
    FROM stg_spark_applications a JOIN spark_logs l USING (log_id)
    LEFT JOIN spark_logs k ON k.log_path = a.duplicate_of
), counted AS (
    SELECT *, stage_attempts - stages_used AS stages_left_out,
           stage_attempts || ' stage attempt' || CASE WHEN stage_attempts = 1 THEN '' ELSE 's' END AS all_stages
    FROM logs_read
)
SELECT path, log_id, app_id, attempt_id, status, used, stages_used, stages_left_out, bad_lines,
       CASE WHEN status = 'unreadable' THEN 'skipped: ' || CASE
                WHEN read_error IS NOT NULL THEN 'it does not decode (' || read_error || ')'
                WHEN lines = 0 THEN 'the file is empty'
                ELSE CASE WHEN lines = 1 THEN 'its one line is not' ELSE 'none of its ' || lines || ' lines is' END
                     || ' a Spark event (a JSON object whose first field is "Event")' END
            WHEN app_id IS NULL THEN 'skipped: no SparkListenerApplicationStart event (not an application''s log)'
            WHEN kept_copy IS NOT NULL THEN 'skipped: a second log of application ' || app_id
                || coalesce(' attempt ' || attempt_id, '') || ': ' || kept_copy
                || ' is the one staged (not in progress, complete, fewer bad lines, more lines)'
            WHEN NOT used THEN 'skipped: no stage completed before the log stops'
                || CASE WHEN stage_attempts > 0 THEN ' (' || all_stages || ' cut by its end)' ELSE '' END
            WHEN status = 'complete' THEN 'used: ' || all_stages
            WHEN status = 'in_progress' THEN 'used up to what was written so far: ' || stages_used || ' of '
                || all_stages || CASE WHEN stages_left_out > 0
                                      THEN '; ' || stages_left_out || ' still running left out' ELSE '' END
            ELSE 'used up to its last complete stage: ' || stages_used || ' of ' || all_stages
                || CASE WHEN stages_left_out > 0 THEN '; ' || stages_left_out || ' cut by the log''s end left out'
                        ELSE ' (none cut: only the application''s end is missing)' END
       END || CASE WHEN bad_lines > 0 AND status <> 'unreadable'
                   THEN '; ' || bad_lines || CASE WHEN bad_lines = 1 THEN ' line that does not parse'
                                                  ELSE ' lines that do not parse' END
                        || ' set aside (table quarantine)'
                   ELSE '' END AS done
FROM counted
UNION ALL
SELECT entry, NULL, NULL, NULL, 'not_a_log', false, 0, 0, 0, 'skipped: ' || reason FROM spark_not_logs
ORDER BY path;
