-- Per-job and per-task statistics of one trace, one row per observation, for
-- `trace_realism` (two traces side by side, docs/SYNTHETIC_TRACE.md). Read from
-- the warehouse tables and the trace's staging views, so it runs right after
-- `tasks` of the configured trace. `kind`: 'numeric' (value) or 'category'.
--   job_*      jobs of `tasks` with >= ${min_tasks} finished tasks (as the NURD
--              selection sees them): latency quantiles of their finished tasks;
--   task_*     tasks of the selected jobs first scheduled inside the window;
--   all_jobs_* every job with task events (the population failure prediction sees);
--   usage_*    per-job means of the usage rows of ${usage_label} (one value per job:
--              a sample of one window and a whole trace weigh jobs alike).
WITH fin AS (
    SELECT job_id, count(*) AS n,
        quantile_cont(latency_s, 0.9) AS p90, quantile_cont(latency_s, 0.5) AS p50, max(latency_s) AS mx
    FROM tasks WHERE trace = '${trace}' GROUP BY job_id HAVING count(*) >= ${min_tasks}
),
sel_tasks AS (
    SELECT l.* FROM task_lifecycle l
    SEMI JOIN jobs j ON j.trace = '${trace}' AND j.job_id = l.job_id
    WHERE l.trace = '${trace}' AND l.first_schedule_us > 0
),
task_jobs AS (
    SELECT job_id, count(*) AS n_tasks FROM task_lifecycle WHERE trace = '${trace}' GROUP BY job_id
),
job_end AS (
    SELECT job_id, arg_max(event_type, {'t': time, 'e': event_type})
        FILTER (WHERE event_type BETWEEN 2 AND 6) AS final_event
    FROM stg_job_events GROUP BY job_id
),
usage_rows AS (${usage_source}),
usage AS (SELECT job_id, avg(cpu_rate) AS cpu_rate, avg(canonical_memory) AS canonical_memory,
                 avg(total_page_cache) AS total_page_cache, avg(disk_io_time) AS disk_io_time,
                 avg(cpi) AS cpi, avg(mai) AS mai
          FROM usage_rows GROUP BY job_id)
SELECT '${trace}' AS trace, statistic, kind, value, category FROM (
    SELECT 'job_p90_latency_s' AS statistic, 'numeric' AS kind, p90 AS value, NULL::VARCHAR AS category FROM fin
    UNION ALL SELECT 'job_p90_over_p50', 'numeric', p90 / nullif(p50, 0), NULL FROM fin
    UNION ALL SELECT 'job_max_over_p50', 'numeric', mx / nullif(p50, 0), NULL FROM fin
    UNION ALL SELECT 'job_tasks', 'numeric', n_tasks, NULL FROM jobs WHERE trace = '${trace}'
    UNION ALL SELECT 'task_schedule_delay_s', 'numeric', (first_schedule_us - first_submit_us) / 1e6, NULL
        FROM sel_tasks WHERE first_submit_us > 0
    UNION ALL SELECT 'task_evictions', 'numeric', coalesce(len(evict_times), 0), NULL FROM sel_tasks
    UNION ALL SELECT 'task_failures', 'numeric', coalesce(len(fail_times), 0), NULL FROM sel_tasks
    UNION ALL SELECT 'task_end_state', 'category', NULL,
        CASE final_event WHEN 2 THEN 'EVICT' WHEN 3 THEN 'FAIL' WHEN 4 THEN 'FINISH' WHEN 5 THEN 'KILL'
                         WHEN 6 THEN 'LOST' ELSE 'running at the end' END
        FROM sel_tasks
    UNION ALL SELECT 'all_jobs_tasks', 'numeric', n_tasks, NULL FROM task_jobs
    UNION ALL SELECT 'all_jobs_end_state', 'category', NULL,
        CASE e.final_event WHEN 2 THEN 'EVICT' WHEN 3 THEN 'FAIL' WHEN 4 THEN 'FINISH' WHEN 5 THEN 'KILL'
                           WHEN 6 THEN 'LOST' ELSE 'running at the end' END
        FROM task_jobs t LEFT JOIN job_end e USING (job_id)
    UNION ALL SELECT 'usage_cpu_rate', 'numeric', cpu_rate, NULL FROM usage WHERE cpu_rate IS NOT NULL
    UNION ALL SELECT 'usage_canonical_memory', 'numeric', canonical_memory, NULL FROM usage
        WHERE canonical_memory IS NOT NULL
    UNION ALL SELECT 'usage_total_page_cache', 'numeric', total_page_cache, NULL FROM usage
        WHERE total_page_cache IS NOT NULL
    UNION ALL SELECT 'usage_disk_io_time', 'numeric', disk_io_time, NULL FROM usage WHERE disk_io_time IS NOT NULL
    UNION ALL SELECT 'usage_cpi', 'numeric', cpi, NULL FROM usage WHERE cpi IS NOT NULL
    UNION ALL SELECT 'usage_mai', 'numeric', mai, NULL FROM usage WHERE mai IS NOT NULL
)
