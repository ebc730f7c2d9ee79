-- Per-checkpoint features of every finished task of the selected jobs
-- (PROTOCOL.md section 3; the 15 features of the paper's Table 1), min-max
-- normalized per (job, checkpoint). Task time is measured from each task's
-- own first SCHEDULE; at checkpoint t a task is seen as of min(t, latency).
--
-- feature_mode = 'observed' (default, no look-ahead):
--   mean-type metrics: duration-weighted mean over the usage windows that
--     ended by then (empty fields are skipped, not zeros);
--   max-type metrics: max over those windows; EV / FL: events before then;
--   a task with no value yet takes the mean of the job's visible values at
--     that checkpoint (0 if none); min-max over the rows visible at t.
-- feature_mode = 'reference' (the authors' released construction, leaks the
--   label): every usage metric is a cumulative sum of value * window duration
--   / FINAL latency; min-max over every task's final row (clamped to [0, 1]).
--
-- CPI and MAI of windows with tiny CPU use (cpu_rate < ${min_cpu_rate_for_cpi})
-- or absurd values (CPI > ${max_cpi}, MAI > ${max_mai}) are treated as missing
-- (the trace's notes report impossible values there).
WITH sel AS (
    SELECT job_id, task_id, first_schedule_us, latency_us
    FROM tasks WHERE trace = '${trace}'
),
windows AS (
    -- usage rows of selected tasks, grouped by end time so that ties are
    -- cumulated together
    SELECT u.job_id, u.task_index AS task_id,
        u.end_time - s.first_schedule_us                              AS end_rel_us,
        sum((u.end_time - u.start_time) / 1e6)                        AS dur,
        sum(u.cpu_rate * (u.end_time - u.start_time) / 1e6)            AS w_mcu,
        sum(CASE WHEN u.cpu_rate IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_mcu,
        max(u.maximum_cpu_rate)                                        AS m_maxcpu,
        sum(u.maximum_cpu_rate * (u.end_time - u.start_time) / 1e6)    AS w_maxcpu,
        sum(u.sampled_cpu_usage * (u.end_time - u.start_time) / 1e6)   AS w_scpu,
        sum(CASE WHEN u.sampled_cpu_usage IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_scpu,
        sum(u.canonical_memory * (u.end_time - u.start_time) / 1e6)    AS w_cmu,
        sum(CASE WHEN u.canonical_memory IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_cmu,
        sum(u.assigned_memory * (u.end_time - u.start_time) / 1e6)     AS w_amu,
        sum(CASE WHEN u.assigned_memory IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_amu,
        max(u.maximum_memory)                                          AS m_maxmu,
        sum(u.maximum_memory * (u.end_time - u.start_time) / 1e6)      AS w_maxmu,
        sum(u.unmapped_page_cache * (u.end_time - u.start_time) / 1e6) AS w_upc,
        sum(CASE WHEN u.unmapped_page_cache IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_upc,
        sum(u.total_page_cache * (u.end_time - u.start_time) / 1e6)    AS w_tpc,
        sum(CASE WHEN u.total_page_cache IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_tpc,
        sum(u.disk_io_time * (u.end_time - u.start_time) / 1e6)        AS w_mio,
        sum(CASE WHEN u.disk_io_time IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_mio,
        max(u.maximum_disk_io_time)                                    AS m_maxio,
        sum(u.maximum_disk_io_time * (u.end_time - u.start_time) / 1e6) AS w_maxio,
        sum(u.local_disk_space * (u.end_time - u.start_time) / 1e6)    AS w_mdk,
        sum(CASE WHEN u.local_disk_space IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_mdk,
        sum(c.cpi * (u.end_time - u.start_time) / 1e6)                 AS w_cpi,
        sum(CASE WHEN c.cpi IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_cpi,
        sum(c.mai * (u.end_time - u.start_time) / 1e6)                 AS w_mai,
        sum(CASE WHEN c.mai IS NOT NULL THEN (u.end_time - u.start_time) / 1e6 END) AS d_mai
    FROM stg_task_usage u
    JOIN sel s ON s.job_id = u.job_id AND s.task_id = u.task_index,
    LATERAL (SELECT
        CASE WHEN u.cpu_rate >= ${min_cpu_rate_for_cpi} AND u.cpi <= ${max_cpi} THEN u.cpi END AS cpi,
        CASE WHEN u.cpu_rate >= ${min_cpu_rate_for_cpi} AND u.mai <= ${max_mai} THEN u.mai END AS mai) c
    WHERE u.end_time <= s.first_schedule_us + s.latency_us
    GROUP BY ALL
),
cum_usage AS (
    SELECT job_id, task_id, end_rel_us,
        sum(w_mcu)   OVER w AS w_mcu,   sum(d_mcu) OVER w AS d_mcu,
        max(m_maxcpu) OVER w AS m_maxcpu, sum(w_maxcpu) OVER w AS w_maxcpu,
        sum(w_scpu)  OVER w AS w_scpu,  sum(d_scpu) OVER w AS d_scpu,
        sum(w_cmu)   OVER w AS w_cmu,   sum(d_cmu) OVER w AS d_cmu,
        sum(w_amu)   OVER w AS w_amu,   sum(d_amu) OVER w AS d_amu,
        max(m_maxmu) OVER w AS m_maxmu, sum(w_maxmu) OVER w AS w_maxmu,
        sum(w_upc)   OVER w AS w_upc,   sum(d_upc) OVER w AS d_upc,
        sum(w_tpc)   OVER w AS w_tpc,   sum(d_tpc) OVER w AS d_tpc,
        sum(w_mio)   OVER w AS w_mio,   sum(d_mio) OVER w AS d_mio,
        max(m_maxio) OVER w AS m_maxio, sum(w_maxio) OVER w AS w_maxio,
        sum(w_mdk)   OVER w AS w_mdk,   sum(d_mdk) OVER w AS d_mdk,
        sum(w_cpi)   OVER w AS w_cpi,   sum(d_cpi) OVER w AS d_cpi,
        sum(w_mai)   OVER w AS w_mai,   sum(d_mai) OVER w AS d_mai
    FROM windows
    WINDOW w AS (PARTITION BY job_id, task_id ORDER BY end_rel_us
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
task_event_counts AS (
    SELECT e.job_id, e.task_index AS task_id, e.time - s.first_schedule_us AS rel_us,
        count(*) FILTER (WHERE e.event_type = 2) AS n_ev,
        count(*) FILTER (WHERE e.event_type = 3) AS n_fl
    FROM stg_task_events e
    JOIN sel s ON s.job_id = e.job_id AND s.task_id = e.task_index
    WHERE e.event_type IN (2, 3) AND e.time < s.first_schedule_us + s.latency_us
    GROUP BY ALL
),
cum_events AS (
    SELECT job_id, task_id, rel_us,
        sum(n_ev) OVER w AS ev, sum(n_fl) OVER w AS fl
    FROM task_event_counts
    WINDOW w AS (PARTITION BY job_id, task_id ORDER BY rel_us
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
grid AS (
    SELECT s.job_id, s.task_id, c.k, c.checkpoint_s, s.latency_us,
        least(c.checkpoint_us, s.latency_us) AS asof_us,
        s.latency_us <= c.checkpoint_us      AS is_finished
    FROM sel s JOIN job_checkpoints c ON c.trace = '${trace}' AND c.job_id = s.job_id
    UNION ALL
    -- every task's final row (k = -1): the reference mode's min-max bounds
    SELECT job_id, task_id, -1, latency_us / 1e6, latency_us, latency_us, true
    FROM sel
),
asof_usage AS (
    SELECT g.*, u.* EXCLUDE (job_id, task_id, end_rel_us)
    FROM grid g ASOF LEFT JOIN cum_usage u
      ON g.job_id = u.job_id AND g.task_id = u.task_id AND g.asof_us >= u.end_rel_us
),
asof_all AS (
    -- events strictly before the as-of time
    SELECT g.*, coalesce(e.ev, 0)::DOUBLE AS ev, coalesce(e.fl, 0)::DOUBLE AS fl
    FROM asof_usage g ASOF LEFT JOIN cum_events e
      ON g.job_id = e.job_id AND g.task_id = e.task_id AND g.asof_us > e.rel_us
),
raw AS (
    SELECT job_id, task_id, k, checkpoint_s, is_finished,
        CASE '${feature_mode}' WHEN 'observed' THEN w_mcu / d_mcu      ELSE coalesce(w_mcu, 0) * 1e6 / latency_us END AS mcu,
        CASE '${feature_mode}' WHEN 'observed' THEN m_maxcpu           ELSE coalesce(w_maxcpu, 0) * 1e6 / latency_us END AS maxcpu,
        CASE '${feature_mode}' WHEN 'observed' THEN w_scpu / d_scpu    ELSE coalesce(w_scpu, 0) * 1e6 / latency_us END AS scpu,
        CASE '${feature_mode}' WHEN 'observed' THEN w_cmu / d_cmu      ELSE coalesce(w_cmu, 0) * 1e6 / latency_us END AS cmu,
        CASE '${feature_mode}' WHEN 'observed' THEN w_amu / d_amu      ELSE coalesce(w_amu, 0) * 1e6 / latency_us END AS amu,
        CASE '${feature_mode}' WHEN 'observed' THEN m_maxmu            ELSE coalesce(w_maxmu, 0) * 1e6 / latency_us END AS maxmu,
        CASE '${feature_mode}' WHEN 'observed' THEN w_upc / d_upc      ELSE coalesce(w_upc, 0) * 1e6 / latency_us END AS upc,
        CASE '${feature_mode}' WHEN 'observed' THEN w_tpc / d_tpc      ELSE coalesce(w_tpc, 0) * 1e6 / latency_us END AS tpc,
        CASE '${feature_mode}' WHEN 'observed' THEN w_mio / d_mio      ELSE coalesce(w_mio, 0) * 1e6 / latency_us END AS mio,
        CASE '${feature_mode}' WHEN 'observed' THEN m_maxio            ELSE coalesce(w_maxio, 0) * 1e6 / latency_us END AS maxio,
        CASE '${feature_mode}' WHEN 'observed' THEN w_mdk / d_mdk      ELSE coalesce(w_mdk, 0) * 1e6 / latency_us END AS mdk,
        CASE '${feature_mode}' WHEN 'observed' THEN w_cpi / d_cpi      ELSE coalesce(w_cpi, 0) * 1e6 / latency_us END AS cpi,
        CASE '${feature_mode}' WHEN 'observed' THEN w_mai / d_mai      ELSE coalesce(w_mai, 0) * 1e6 / latency_us END AS mai,
        ev, fl
    FROM asof_all
),
imputed AS (
    -- a task with no value yet takes the mean of the job's visible values at
    -- that checkpoint, else 0
    SELECT job_id, task_id, k, checkpoint_s, is_finished,
        coalesce(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished)),
                 avg(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished)))
                    OVER (PARTITION BY job_id, k),
                 0)
    FROM raw
),
grouped AS (
    -- observed: min-max over the rows visible at each checkpoint;
    -- reference: over every task's final row
    SELECT *,
        CASE '${feature_mode}' WHEN 'observed' THEN k ELSE -1 END         AS norm_group,
        CASE '${feature_mode}' WHEN 'observed' THEN true ELSE k = -1 END  AS in_bounds
    FROM imputed
),
normalized AS (
    SELECT job_id, task_id, k, checkpoint_s, is_finished,
        greatest(0, least(1, coalesce(
            (COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished, norm_group, in_bounds))
             - min(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished, norm_group, in_bounds)))
                 FILTER (WHERE in_bounds) OVER (PARTITION BY job_id, norm_group))
            / nullif(
                max(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished, norm_group, in_bounds)))
                    FILTER (WHERE in_bounds) OVER (PARTITION BY job_id, norm_group)
              - min(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished, norm_group, in_bounds)))
                    FILTER (WHERE in_bounds) OVER (PARTITION BY job_id, norm_group), 0),
            0)))
    FROM grouped
)
SELECT '${trace}' AS trace, job_id, task_id, k, checkpoint_s, is_finished,
    mcu, maxcpu, scpu, cmu, amu, maxmu, upc, tpc, mio, maxio, mdk, cpi, mai, ev, fl
FROM normalized
WHERE k >= 0
ORDER BY job_id, k, task_id
