-- Usage of the selected jobs' tasks, in ONE scan of task_usage, reduced to
-- what the features need: per (task, window end) the window durations and
-- the value x duration sums of the mean-type metrics (with the duration over
-- which each field was present: empty fields are missing, not zeros) and the
-- maxima of the max-type metrics. `task_outcomes` reads it for "has usage",
-- `checkpoint_features` for everything else.
-- CPI and MAI of windows with tiny CPU use (cpu_rate < ${min_cpu_rate_for_cpi})
-- or absurd values (CPI > ${max_cpi}, MAI > ${max_mai}) are missing (the trace's
-- notes report impossible values there).
WITH u AS (
    SELECT u.job_id, u.task_index AS task_id, u.end_time,
        (u.end_time - u.start_time) / 1e6 AS dur,
        u.cpu_rate, u.maximum_cpu_rate, u.sampled_cpu_usage, u.canonical_memory, u.assigned_memory,
        u.maximum_memory, u.unmapped_page_cache, u.total_page_cache, u.disk_io_time,
        u.maximum_disk_io_time, u.local_disk_space,
        CASE WHEN u.cpu_rate >= ${min_cpu_rate_for_cpi} AND u.cpi <= ${max_cpi} THEN u.cpi END AS cpi,
        CASE WHEN u.cpu_rate >= ${min_cpu_rate_for_cpi} AND u.mai <= ${max_mai} THEN u.mai END AS mai
    FROM stg_task_usage u
    SEMI JOIN jobs j ON j.trace = '${trace}' AND j.job_id = u.job_id
    -- rows with a NaN or an infinity, and repeats of a window, stop the build (on_bad_rows=fail,
    -- located) or are quarantined (table quarantine): a quarantined row is left out here, and a
    -- window measured twice counts once (the first in file order)
    WHERE coalesce(isfinite(u.cpu_rate) AND isfinite(u.canonical_memory) AND isfinite(u.assigned_memory)
                   AND isfinite(u.unmapped_page_cache) AND isfinite(u.total_page_cache)
                   AND isfinite(u.maximum_memory) AND isfinite(u.disk_io_time) AND isfinite(u.local_disk_space)
                   AND isfinite(u.maximum_cpu_rate) AND isfinite(u.maximum_disk_io_time) AND isfinite(u.cpi)
                   AND isfinite(u.mai) AND isfinite(u.sample_portion) AND isfinite(u.sampled_cpu_usage), true)
    QUALIFY row_number() OVER (PARTITION BY u.job_id, u.task_index, u.start_time, u.end_time
                               ORDER BY u.filename, u.machine_id, u.cpu_rate, u.canonical_memory) = 1
)
SELECT '${trace}' AS trace, job_id, task_id, end_time,
    sum(dur)                                                        AS dur,
    sum(cpu_rate * dur)           AS w_mcu,   sum(CASE WHEN cpu_rate IS NOT NULL THEN dur END)            AS d_mcu,
    max(maximum_cpu_rate)         AS m_maxcpu, sum(maximum_cpu_rate * dur) AS w_maxcpu,
    sum(sampled_cpu_usage * dur)  AS w_scpu,  sum(CASE WHEN sampled_cpu_usage IS NOT NULL THEN dur END)   AS d_scpu,
    sum(canonical_memory * dur)   AS w_cmu,   sum(CASE WHEN canonical_memory IS NOT NULL THEN dur END)    AS d_cmu,
    sum(assigned_memory * dur)    AS w_amu,   sum(CASE WHEN assigned_memory IS NOT NULL THEN dur END)     AS d_amu,
    max(maximum_memory)           AS m_maxmu, sum(maximum_memory * dur)   AS w_maxmu,
    sum(unmapped_page_cache * dur) AS w_upc,  sum(CASE WHEN unmapped_page_cache IS NOT NULL THEN dur END) AS d_upc,
    sum(total_page_cache * dur)   AS w_tpc,   sum(CASE WHEN total_page_cache IS NOT NULL THEN dur END)    AS d_tpc,
    sum(disk_io_time * dur)       AS w_mio,   sum(CASE WHEN disk_io_time IS NOT NULL THEN dur END)        AS d_mio,
    max(maximum_disk_io_time)     AS m_maxio, sum(maximum_disk_io_time * dur) AS w_maxio,
    sum(local_disk_space * dur)   AS w_mdk,   sum(CASE WHEN local_disk_space IS NOT NULL THEN dur END)    AS d_mdk,
    sum(cpi * dur)                AS w_cpi,   sum(CASE WHEN cpi IS NOT NULL THEN dur END)                 AS d_cpi,
    sum(mai * dur)                AS w_mai,   sum(CASE WHEN mai IS NOT NULL THEN dur END)                 AS d_mai
FROM u
GROUP BY job_id, task_id, end_time
