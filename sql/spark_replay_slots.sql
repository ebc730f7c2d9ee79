-- Each executor's cores and life (stg_spark_executors), and every task attempt that held one of its
-- cores (stg_spark_tasks, every stage), speculative copies left out since the replay decides its
-- own copies: what the replay of speculation needs to know whether a copy
-- would have found a free slot, and on which host. A task of a local-mode application runs on
-- executor 'driver', which has no ExecutorAdded event: it has no row here (no slot to give a copy).
-- Times in milliseconds since the epoch.
CREATE OR REPLACE TABLE spark_replay_slots AS
SELECT e.log_id, e.executor_id, e.host, e.cores,
       e.added_us / 1000.0 AS added_ms, e.removed_us / 1000.0 AS removed_ms,
       t.launch_us / 1000.0 AS launch_ms, coalesce(t.finish_us, a.end_us, t.launch_us) / 1000.0 AS finish_ms
FROM stg_spark_executors e
JOIN stg_spark_applications a ON a.log_id = e.log_id
LEFT JOIN stg_spark_tasks t ON t.log_id = e.log_id AND t.executor_id = e.executor_id AND NOT t.speculative
ORDER BY e.log_id, e.executor_id, t.launch_us;
