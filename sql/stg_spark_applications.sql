-- One row per Spark event log read (staged from spark_log_lines, written by
-- stragglers/warehouse/spark_staging.py): the application attempt it is, and whether it is the one
-- kept when two logs hold the same application attempt (the complete one, then the one with fewer
-- bad lines, then more events, then the first by path; the other is a counted skip).
-- Times in microseconds since the epoch (Spark writes milliseconds).
CREATE OR REPLACE TABLE stg_spark_applications AS
WITH ev AS (
    SELECT log_id, event, text FROM spark_log_lines
    WHERE valid AND event IN ('SparkListenerLogStart', 'SparkListenerApplicationStart',
                              'SparkListenerApplicationEnd', 'SparkListenerEnvironmentUpdate')
), per_log AS (
    SELECT l.log_id,
           any_value(json_extract_string(e.text, '$$."Spark Version"')) FILTER (e.event = 'SparkListenerLogStart') AS spark_version,
           any_value(json_extract_string(e.text, '$$."App ID"')) FILTER (e.event = 'SparkListenerApplicationStart') AS app_id,
           any_value(json_extract_string(e.text, '$$."App Attempt ID"')) FILTER (e.event = 'SparkListenerApplicationStart') AS attempt_id,
           any_value(json_extract_string(e.text, '$$."App Name"')) FILTER (e.event = 'SparkListenerApplicationStart') AS app_name,
           any_value(json_extract_string(e.text, '$$."User"')) FILTER (e.event = 'SparkListenerApplicationStart') AS user_name,
           min(json_extract(e.text, '$$."Timestamp"')::BIGINT * 1000) FILTER (e.event = 'SparkListenerApplicationStart') AS start_us,
           max(json_extract(e.text, '$$."Timestamp"')::BIGINT * 1000) FILTER (e.event = 'SparkListenerApplicationEnd') AS end_us,
           any_value(json_extract(e.text, '$$."Spark Properties"')) FILTER (e.event = 'SparkListenerEnvironmentUpdate') AS spark_properties
    FROM spark_logs l LEFT JOIN ev e USING (log_id)
    GROUP BY l.log_id
), ranked AS (
    SELECT l.log_id, l.log_path, l.codec, l.rolling, l.in_progress, l.files, l.lines, l.bad_lines,
           p.app_id, p.attempt_id, p.app_name, p.spark_version, p.user_name, p.start_us, p.end_us,
           p.end_us IS NOT NULL AS complete, p.spark_properties,
           row_number() OVER (PARTITION BY p.app_id, coalesce(p.attempt_id, '')
                              ORDER BY l.in_progress, p.end_us IS NULL, l.bad_lines, l.lines DESC, l.log_path) AS rank
    FROM spark_logs l JOIN per_log p USING (log_id)
)
SELECT r.* EXCLUDE (rank),
       r.app_id IS NOT NULL AND r.rank = 1 AS kept,
       CASE WHEN r.rank > 1 THEN k.log_path END AS duplicate_of
FROM ranked r
LEFT JOIN ranked k ON k.app_id = r.app_id AND coalesce(k.attempt_id, '') = coalesce(r.attempt_id, '') AND k.rank = 1
ORDER BY r.log_id;
