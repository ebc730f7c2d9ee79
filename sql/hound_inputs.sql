-- Hound's input (Zheng and Lee, POMACS 2018, Section 4.1 and Table 2): one row
-- per finished task of every selected job (`tasks`), with its whole-run profile
-- and its end-to-end latency, first SUBMIT to final FINISH (latency_s): a
-- queueing delay lengthens it, as Hound's E10 says ("queueing delays cause
-- stragglers by extending tasks' end-to-end latency", Section 5; Appendix F:
-- the correlation of scheduling delay and latency "should in fact be
-- positive"). run_latency_s is the first SCHEDULE to final FINISH part
-- (NURD's latency); latency_s falls back to it where the first SUBMIT is
-- before the trace window (sched_delay NULL). Usage metrics are duration-weighted means, over the task's
-- usage windows up to its final FINISH, of the per-window mean (MEAN_*, MEM_ASSIGN,
-- PAGE_CACHE*, DISK_SPACE, CPI, CACHE_MISS = memory accesses per instruction)
-- or of the per-window maximum (PEAK_*): "we average these periodic
-- measurements over the task's duration". A window's empty field is skipped
-- (weight 0), not read as 0; a task with no value at all keeps NULL here and
-- the per-job code imputes the job's median (counted in hound_profiles).
-- SCHED_DELAY = first SCHEDULE - first SUBMIT (NULL when the SUBMIT is before
-- the trace window); PRIORITY and REQ_* are the task's largest values.
-- Machine capacity (MACHINE_CPU/RAM) is not staged and not used.
-- Jobs with fewer than ${hound_min_tasks} such tasks are left out.
WITH sel AS (
    SELECT job_id, task_id, first_schedule_us, latency_us, latency_s, evictions, failures
    FROM tasks WHERE trace = '${trace}'
),
events AS (
    SELECT e.job_id, e.task_index AS task_id,
        min(e.time) FILTER (WHERE e.event_type = 0 AND e.time > 0)   AS first_submit_us,
        max(e.priority)                                               AS priority,
        max(e.cpu_request)                                            AS req_cpu,
        max(e.memory_request)                                         AS req_mem,
        max(e.disk_request)                                           AS req_disk
    FROM stg_task_events e
    SEMI JOIN sel s ON s.job_id = e.job_id AND s.task_id = e.task_index
    GROUP BY e.job_id, e.task_index
),
usage AS (
    SELECT w.job_id, w.task_id,
        sum(w.w_mcu) / nullif(sum(w.d_mcu), 0)                                            AS mean_cpu,
        sum(w.w_maxcpu) / nullif(sum(CASE WHEN w.w_maxcpu IS NOT NULL THEN w.dur END), 0) AS peak_cpu,
        sum(w.w_cmu) / nullif(sum(w.d_cmu), 0)                                            AS mean_mem,
        sum(w.w_maxmu) / nullif(sum(CASE WHEN w.w_maxmu IS NOT NULL THEN w.dur END), 0)   AS peak_mem,
        sum(w.w_amu) / nullif(sum(w.d_amu), 0)                                            AS mem_assign,
        sum(w.w_tpc) / nullif(sum(w.d_tpc), 0)                                            AS page_cache,
        sum(w.w_upc) / nullif(sum(w.d_upc), 0)                                            AS page_cache_um,
        sum(w.w_mio) / nullif(sum(w.d_mio), 0)                                            AS mean_io,
        sum(w.w_maxio) / nullif(sum(CASE WHEN w.w_maxio IS NOT NULL THEN w.dur END), 0)   AS peak_io,
        sum(w.w_mdk) / nullif(sum(w.d_mdk), 0)                                            AS disk_space,
        sum(w.w_cpi) / nullif(sum(w.d_cpi), 0)                                            AS cpi,
        sum(w.w_mai) / nullif(sum(w.d_mai), 0)                                            AS cache_miss
    FROM usage_windows w
    JOIN sel s ON s.job_id = w.job_id AND s.task_id = w.task_id
    WHERE w.trace = '${trace}' AND w.end_time <= s.first_schedule_us + s.latency_us
    GROUP BY w.job_id, w.task_id
),
rows AS (
    SELECT s.job_id, s.task_id,
        s.latency_s + coalesce((s.first_schedule_us - e.first_submit_us) / 1e6, 0)   AS latency_s,
        s.latency_s                                                                AS run_latency_s,
        u.mean_cpu, u.peak_cpu, u.mean_mem, u.peak_mem, u.mem_assign, u.page_cache, u.page_cache_um,
        u.mean_io, u.peak_io, u.disk_space, u.cpi, u.cache_miss,
        (s.first_schedule_us - e.first_submit_us) / 1e6                     AS sched_delay,
        s.evictions::DOUBLE                                                 AS evict,
        s.failures::DOUBLE                                                  AS fail,
        e.priority::DOUBLE AS priority, e.req_cpu, e.req_mem, e.req_disk,
        count(*) OVER (PARTITION BY s.job_id)                               AS n_job_tasks
    FROM sel s
    LEFT JOIN usage u USING (job_id, task_id)
    LEFT JOIN events e USING (job_id, task_id)
)
SELECT '${trace}' AS trace, * EXCLUDE (n_job_tasks)
FROM rows
WHERE n_job_tasks >= ${hound_min_tasks}
ORDER BY job_id, task_id
