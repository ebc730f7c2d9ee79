-- One row per task attempt of the kept logs (SparkListenerTaskStart, and its TaskEnd when there is
-- one: a task still running when the log ends has outcome 'running' and no finish). A task is the
-- (stage attempt, task index); its attempts are its lives, speculative copies marked. outcome:
-- 'success', 'killed' (TaskKilled: a speculative copy's loser, a cancelled stage) or 'failed' (every
-- other end reason); end_reason is Spark's reason class, reason its message. Metrics are what the
-- driver gets at the task's end ("Task Metrics"): times in ms as Spark counts them (CPU times in
-- ns), sizes in bytes. launch_us / finish_us: microseconds since the epoch.
CREATE OR REPLACE TABLE stg_spark_tasks AS
WITH started AS (
    SELECT t.log_id, t.j."Stage ID" AS stage_id, t.j."Stage Attempt ID" AS stage_attempt, t.j."Task Info" AS i
    FROM spark_task_starts t JOIN stg_spark_applications a ON a.log_id = t.log_id AND a.kept
), ended AS (
    SELECT t.log_id, t.j."Stage ID" AS stage_id, t.j."Stage Attempt ID" AS stage_attempt, t.j."Task Type" AS task_type,
           t.j."Task End Reason" AS r, t.j."Task Info" AS i, t.j."Task Metrics" AS m
    FROM spark_task_ends t JOIN stg_spark_applications a ON a.log_id = t.log_id AND a.kept
)
SELECT a.app_id, coalesce(e.log_id, s.log_id) AS log_id,
       coalesce(e.stage_id, s.stage_id) AS stage_id, coalesce(e.stage_attempt, s.stage_attempt) AS stage_attempt,
       coalesce(e.i."Task ID", s.i."Task ID") AS task_id,
       coalesce(e.i."Index", s.i."Index") AS task_index,
       coalesce(e.i."Attempt", s.i."Attempt") AS attempt,
       coalesce(e.i."Partition ID", s.i."Partition ID") AS partition_id,
       coalesce(e.i."Speculative", s.i."Speculative", false) AS speculative,
       coalesce(e.i."Launch Time", s.i."Launch Time") * 1000 AS launch_us,
       e.i."Finish Time" * 1000 AS finish_us,
       coalesce(e.i."Executor ID", s.i."Executor ID") AS executor_id,
       coalesce(e.i."Host", s.i."Host") AS host,
       coalesce(e.i."Locality", s.i."Locality") AS locality,
       e.task_type,
       CASE WHEN e.log_id IS NULL THEN 'running'
            WHEN e.r."Reason" = 'Success' THEN 'success'
            WHEN e.r."Reason" = 'TaskKilled' THEN 'killed'
            ELSE 'failed' END AS outcome,
       e.r."Reason" AS end_reason,
       CASE e.r."Reason"
            WHEN 'Success' THEN NULL
            WHEN 'ExceptionFailure' THEN concat_ws(': ', e.r."Class Name", e.r."Description")
            WHEN 'TaskKilled' THEN e.r."Kill Reason"
            WHEN 'ExecutorLostFailure' THEN e.r."Loss Reason"
            ELSE coalesce(e.r."Message", e.r."Description") END AS reason,
       e.m."Executor Run Time" AS executor_run_ms,
       e.m."Executor CPU Time" AS executor_cpu_ns,
       e.m."Executor Deserialize Time" AS deserialize_ms,
       e.m."JVM GC Time" AS gc_ms,
       e.m."Result Serialization Time" AS result_serialization_ms,
       e.i."Getting Result Time" * 1000 AS getting_result_us,
       e.m."Result Size" AS result_bytes,
       e.m."Peak Execution Memory" AS peak_execution_memory_bytes,
       e.m."Memory Bytes Spilled" AS memory_spilled_bytes,
       e.m."Disk Bytes Spilled" AS disk_spilled_bytes,
       e.m."Input Metrics"."Bytes Read" AS input_bytes,
       e.m."Input Metrics"."Records Read" AS input_records,
       e.m."Output Metrics"."Bytes Written" AS output_bytes,
       e.m."Output Metrics"."Records Written" AS output_records,
       e.m."Shuffle Read Metrics"."Remote Bytes Read" + e.m."Shuffle Read Metrics"."Local Bytes Read"
           AS shuffle_read_bytes,
       e.m."Shuffle Read Metrics"."Remote Bytes Read" AS shuffle_remote_read_bytes,
       e.m."Shuffle Read Metrics"."Total Records Read" AS shuffle_read_records,
       e.m."Shuffle Read Metrics"."Fetch Wait Time" AS shuffle_fetch_wait_ms,
       e.m."Shuffle Write Metrics"."Shuffle Bytes Written" AS shuffle_write_bytes,
       e.m."Shuffle Write Metrics"."Shuffle Records Written" AS shuffle_write_records,
       e.m."Shuffle Write Metrics"."Shuffle Write Time" AS shuffle_write_time_ns
FROM ended e
FULL OUTER JOIN started s ON s.log_id = e.log_id AND s.i."Task ID" = e.i."Task ID"
JOIN stg_spark_applications a ON a.log_id = coalesce(e.log_id, s.log_id)
ORDER BY log_id, task_id;
