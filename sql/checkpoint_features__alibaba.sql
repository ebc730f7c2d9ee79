-- Alibaba features: the 4 static per-instance summaries (cpu_avg, cpu_max,
-- mem_avg, mem_max), the same at every checkpoint (the traces have no
-- per-instance time series; docs/PROTOCOL.md section 3). Missing values take the
-- job's mean; min-max per (job, checkpoint) over every instance.
WITH inst AS (
    SELECT i.job_id, i.task_id, i.cpu_avg, i.cpu_max, i.mem_avg, i.mem_max
    FROM alibaba_instances i
    SEMI JOIN tasks t ON t.trace = '${trace}' AND t.job_id = i.job_id AND t.task_id = i.task_id
),
imputed AS (
    SELECT job_id, task_id,
        coalesce(COLUMNS(* EXCLUDE (job_id, task_id)),
                 avg(COLUMNS(* EXCLUDE (job_id, task_id))) OVER (PARTITION BY job_id), 0)
    FROM inst
),
normalized AS (
    SELECT job_id, task_id,
        greatest(0, least(1, coalesce(
            (COLUMNS(* EXCLUDE (job_id, task_id)) - min(COLUMNS(* EXCLUDE (job_id, task_id))) OVER (PARTITION BY job_id))
            / nullif(max(COLUMNS(* EXCLUDE (job_id, task_id))) OVER (PARTITION BY job_id)
                     - min(COLUMNS(* EXCLUDE (job_id, task_id))) OVER (PARTITION BY job_id), 0), 0)))
    FROM imputed
)
SELECT '${trace}' AS trace, n.job_id, n.task_id, c.k, c.checkpoint_s,
    t.latency_us <= c.checkpoint_us AS is_finished,
    n.cpu_avg, n.cpu_max, n.mem_avg, n.mem_max
FROM normalized n
JOIN tasks t ON t.trace = '${trace}' AND t.job_id = n.job_id AND t.task_id = n.task_id
JOIN ${checkpoints} c ON c.trace = '${trace}' AND c.job_id = n.job_id
ORDER BY n.job_id, c.k, n.task_id
