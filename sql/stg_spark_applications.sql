-- One row per Spark event log read (spark_logs and spark_app_events, written by
-- stragglers/warehouse/spark_staging.py): the application attempt it is, and whether it is the one
-- kept when two logs hold the same application attempt (the complete one, then the one with fewer
-- bad lines, then more events, then the first by path; the other is a counted skip).
-- Times in microseconds since the epoch (Spark writes milliseconds).
CREATE OR REPLACE TABLE stg_spark_applications AS
WITH per_log AS (
    SELECT l.log_id,
           any_value(e.j."Spark Version") FILTER (e.j.Event = 'SparkListenerLogStart') AS spark_version,
           any_value(e.j."App ID") FILTER (e.j.Event = 'SparkListenerApplicationStart') AS app_id,
           any_value(e.j."App Attempt ID") FILTER (e.j.Event = 'SparkListenerApplicationStart') AS attempt_id,
           any_value(e.j."App Name") FILTER (e.j.Event = 'SparkListenerApplicationStart') AS app_name,
           any_value(e.j."User") FILTER (e.j.Event = 'SparkListenerApplicationStart') AS user_name,
           min(e.j."Timestamp" * 1000) FILTER (e.j.Event = 'SparkListenerApplicationStart') AS start_us,
           max(e.j."Timestamp" * 1000) FILTER (e.j.Event = 'SparkListenerApplicationEnd') AS end_us,
           any_value(e.spark_properties) FILTER (e.j.Event = 'SparkListenerEnvironmentUpdate') AS spark_properties
    FROM spark_logs l LEFT JOIN spark_app_events e USING (log_id)
    GROUP BY l.log_id
), ranked AS (
    SELECT l.log_id, l.log_path, l.codec, l.rolling, l.in_progress, l.files, l.lines,
           coalesce(b.bad_lines, 0) AS bad_lines,
           p.app_id, p.attempt_id, p.app_name, p.spark_version, p.user_name, p.start_us, p.end_us,
           p.end_us IS NOT NULL AS complete, p.spark_properties,
           row_number() OVER (PARTITION BY p.app_id, coalesce(p.attempt_id, '')
                              ORDER BY l.in_progress, p.end_us IS NULL, coalesce(b.bad_lines, 0), l.lines DESC,
                                       l.log_path) AS rank
    FROM spark_logs l JOIN per_log p USING (log_id)
    LEFT JOIN (SELECT log_id, count(*) AS bad_lines FROM spark_bad_lines GROUP BY log_id) b USING (log_id)
)
SELECT r.* EXCLUDE (rank),
       r.app_id IS NOT NULL AND r.rank = 1 AS kept,
       CASE WHEN r.rank > 1 THEN k.log_path END AS duplicate_of
FROM ranked r
LEFT JOIN ranked k ON k.app_id = r.app_id AND coalesce(k.attempt_id, '') = coalesce(r.attempt_id, '') AND k.rank = 1
ORDER BY r.log_id;
