-- El-Sayed et al. (ICDCS 2017), Table IV 'Usage': per task, the mean CPU rate,
-- canonical memory and disk I/O time over its usage windows that start within
-- the first ${usage_window_s} s after its first SCHEDULE (its first attempt).
WITH first_start AS (
    SELECT job_id, task_id, start_us FROM task_attempts
    WHERE trace = '${trace}' AND attempt = 1 AND start_us > 0
)
SELECT
    '${trace}'              AS trace,
    u.job_id,
    u.task_index            AS task_id,
    avg(u.cpu_rate)         AS early_cpu,
    avg(u.canonical_memory) AS early_memory,
    avg(u.disk_io_time)     AS early_io,
    count(*)                AS early_windows
FROM stg_task_usage u
JOIN first_start f ON f.job_id = u.job_id AND f.task_id = u.task_index
WHERE u.start_time < f.start_us + ${usage_window_s} * 1000000
GROUP BY u.job_id, u.task_index
ORDER BY u.job_id, task_id
