-- One row per Spark event log read (spark_logs, spark_app_events and spark_stage_events, written by
-- stragglers/warehouse/spark_staging.py): the application attempt it is, what kind of log it is,
-- and whether it is the one kept when two logs hold the same application attempt (the usable one,
-- then the one not in progress, the complete one, the one with fewer bad lines, more lines, then
-- the first by path; the other is a counted skip).
-- status: 'complete' (its application's end is in it), 'in_progress' (still being written:
-- .inprogress, or a rolling log whose appstatus says so), 'truncated' (neither: its writer died or
-- the file was cut), 'not_a_log' (events, but no application start), 'unreadable' (no line of it is
-- a Spark event: it does not decode, or holds something else).
-- A log that stops before its application does is used up to its last complete stage
-- (stg_spark_stages.cut): a truncated one is usable only with a completed stage attempt (one
-- without is a counted skip: its writer is gone and nothing of it is whole); a log in progress is
-- staged as far as it is written, as its application is still running. stage_attempts /
-- stages_completed count its attempts (StageSubmitted or StageCompleted) and those with a
-- StageCompleted.
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
), per_log_stages AS (
    SELECT log_id, count(DISTINCT (j."Stage Info"."Stage ID", j."Stage Info"."Stage Attempt ID")) AS stage_attempts,
           count(DISTINCT (j."Stage Info"."Stage ID", j."Stage Info"."Stage Attempt ID"))
               FILTER (j.Event = 'SparkListenerStageCompleted') AS stages_completed
    FROM spark_stage_events GROUP BY log_id
), described AS (
    SELECT l.log_id, l.log_path, l.codec, l.rolling, l.in_progress, l.files, l.lines,
           coalesce(b.bad_lines, 0) AS bad_lines,
           p.app_id, p.attempt_id, p.app_name, p.spark_version, p.user_name, p.start_us, p.end_us,
           p.end_us IS NOT NULL AS complete, p.spark_properties, l.events,
           coalesce(s.stage_attempts, 0) AS stage_attempts, coalesce(s.stages_completed, 0) AS stages_completed,
           CASE WHEN l.events = 0 THEN 'unreadable'
                WHEN p.app_id IS NULL THEN 'not_a_log'
                WHEN p.end_us IS NOT NULL THEN 'complete'
                WHEN l.in_progress THEN 'in_progress'
                ELSE 'truncated' END AS status
    FROM spark_logs l JOIN per_log p USING (log_id)
    LEFT JOIN per_log_stages s USING (log_id)
    LEFT JOIN (SELECT log_id, count(*) AS bad_lines FROM spark_bad_lines GROUP BY log_id) b USING (log_id)
), usable AS (
    SELECT *, status <> 'truncated' OR stages_completed > 0 AS usable FROM described
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY app_id, coalesce(attempt_id, '')
                                 ORDER BY NOT usable, in_progress, NOT complete, bad_lines, lines DESC,
                                          log_path) AS rank
    FROM usable
)
SELECT r.* EXCLUDE (rank, usable, events, stage_attempts, stages_completed, status),
       r.app_id IS NOT NULL AND r.rank = 1 AND r.usable AS kept,
       CASE WHEN r.rank > 1 AND k.usable THEN k.log_path END AS duplicate_of,
       r.status, r.events, r.stage_attempts, r.stages_completed
FROM ranked r
LEFT JOIN ranked k ON k.app_id = r.app_id AND coalesce(k.attempt_id, '') = coalesce(r.attempt_id, '') AND k.rank = 1
ORDER BY r.log_id;
