-- Per-checkpoint features of every finished task of the selected jobs
-- (docs/PROTOCOL.md section 3; the 15 features of the paper's Table 1), min-max
-- normalized per (job, checkpoint). Task time is measured from each task's
-- own first SCHEDULE; at checkpoint t a task that starts at ${task_start} on the grid's clock
-- (0 on the paper's grid; its start on the job's wall clock on the operator's,
-- sql/operator_checkpoints.sql) is seen as of min(t - start, latency). A task not started
-- by t is pending: nothing of it is read (its usage values take the job's mean, its event
-- values 0; the replay never shows it to a method).
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
-- Usage comes pre-reduced per window from usage_windows.sql (CPI/MAI filters
-- there), EVICT/FAIL times from task_lifecycle.sql: no raw table is read here.
--
-- The event features (sql/event_features.sql, raw) follow the usage ones: in either
-- feature_mode a missing value takes the job's mean at that checkpoint (else 0) and
-- each is min-max normalized over the rows of the same (job, checkpoint). Which
-- columns a method sees is the evaluation's feature_set (usage, events or all).
WITH sel AS (
    SELECT job_id, task_id, first_schedule_us, latency_us, ${task_start} AS start_us
    FROM ${tasks} WHERE trace = '${trace}' AND ${job_slice}   -- a slice of jobs (bounded memory)
),
windows AS (
    -- per (task, window end) sums of the selected tasks (usage_windows.sql),
    -- on the task's own clock
    SELECT w.* EXCLUDE (trace, end_time), w.end_time - s.first_schedule_us AS end_rel_us
    FROM usage_windows w
    JOIN sel s ON s.job_id = w.job_id AND s.task_id = w.task_id
    WHERE w.trace = '${trace}' AND w.end_time <= s.first_schedule_us + s.latency_us
),
cum_usage AS (
    -- what each feature has seen by each window end, by usage_windows.sql's naming: running sums of
    -- the duration-weighted sums (w_<f>) and covered durations (d_<f>), running max of the maxima (m_<f>)
    SELECT job_id, task_id, end_rel_us,
        sum(COLUMNS('^[wd]_')) OVER w,
        max(COLUMNS('^m_')) OVER w
    FROM windows
    WINDOW w AS (PARTITION BY job_id, task_id ORDER BY end_rel_us
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
task_event_counts AS (
    -- EVICT / FAIL times kept by task_lifecycle (no second scan of task_events)
    SELECT job_id, task_id, rel_us, count(*) FILTER (WHERE kind = 2) AS n_ev, count(*) FILTER (WHERE kind = 3) AS n_fl
    FROM (
        SELECT l.job_id, l.task_id, unnest(l.evict_times) - s.first_schedule_us AS rel_us, 2 AS kind,
            s.latency_us
        FROM task_lifecycle l JOIN sel s USING (job_id, task_id)
        WHERE l.trace = '${trace}' AND l.evict_times IS NOT NULL
        UNION ALL
        SELECT l.job_id, l.task_id, unnest(l.fail_times) - s.first_schedule_us, 3, s.latency_us
        FROM task_lifecycle l JOIN sel s USING (job_id, task_id)
        WHERE l.trace = '${trace}' AND l.fail_times IS NOT NULL
    )
    WHERE rel_us < latency_us
    GROUP BY job_id, task_id, rel_us
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
        CASE WHEN c.checkpoint_us >= s.start_us
             THEN least(c.checkpoint_us - s.start_us, s.latency_us) END AS asof_us,   -- NULL: pending
        s.latency_us <= c.checkpoint_us - s.start_us                    AS is_finished
    FROM sel s JOIN ${checkpoints} c ON c.trace = '${trace}' AND c.job_id = s.job_id
    UNION ALL
    -- every task's final row (k = -1): the reference mode's min-max bounds
    SELECT job_id, task_id, -1, latency_us / 1e6, latency_us, latency_us, true
    FROM sel
),
asof_usage AS (
    -- a pending task (no as-of time) joins nothing: an ASOF join would match it anyway
    SELECT g.*, u.* EXCLUDE (job_id, task_id, end_rel_us)
    FROM (SELECT * FROM grid WHERE asof_us IS NOT NULL) g ASOF LEFT JOIN cum_usage u
      ON g.job_id = u.job_id AND g.task_id = u.task_id AND g.asof_us >= u.end_rel_us
    UNION ALL BY NAME
    SELECT * FROM grid WHERE asof_us IS NULL
),
asof_all AS (
    -- events strictly before the as-of time
    SELECT g.*, coalesce(e.ev, 0)::DOUBLE AS ev, coalesce(e.fl, 0)::DOUBLE AS fl
    FROM (SELECT * FROM asof_usage WHERE asof_us IS NOT NULL) g ASOF LEFT JOIN cum_events e
      ON g.job_id = e.job_id AND g.task_id = e.task_id AND g.asof_us > e.rel_us
    UNION ALL BY NAME
    SELECT *, 0::DOUBLE AS ev, 0::DOUBLE AS fl FROM asof_usage WHERE asof_us IS NULL
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
    -- that checkpoint, else 0; the mean's rows in task order, so that a parallel build
    -- adds them in the same order every time (bit-identical features between builds)
    SELECT job_id, task_id, k, checkpoint_s, is_finished,
        coalesce(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished)),
                 avg(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished)))
                    OVER (PARTITION BY job_id, k ORDER BY task_id
                          ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
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
),
event_imputed AS (
    SELECT job_id, task_id, k,
        coalesce(COLUMNS(* EXCLUDE (trace, job_id, task_id, k, at_us)),
                 avg(COLUMNS(* EXCLUDE (trace, job_id, task_id, k, at_us)))
                    OVER (PARTITION BY job_id, k ORDER BY task_id
                          ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
                 0)
    FROM ${event_features} WHERE trace = '${trace}' AND ${job_slice}
),
event_normalized AS (
    SELECT job_id, task_id, k,
        coalesce((COLUMNS(* EXCLUDE (job_id, task_id, k))
                  - min(COLUMNS(* EXCLUDE (job_id, task_id, k))) OVER (PARTITION BY job_id, k))
                 / nullif(max(COLUMNS(* EXCLUDE (job_id, task_id, k))) OVER (PARTITION BY job_id, k)
                          - min(COLUMNS(* EXCLUDE (job_id, task_id, k))) OVER (PARTITION BY job_id, k), 0),
                 0)
    FROM event_imputed
)
SELECT '${trace}' AS trace, n.job_id, n.task_id, n.k, n.checkpoint_s, n.is_finished,
    n.mcu, n.maxcpu, n.scpu, n.cmu, n.amu, n.maxmu, n.upc, n.tpc, n.mio, n.maxio, n.mdk, n.cpi, n.mai, n.ev, n.fl,
    coalesce(COLUMNS(e.* EXCLUDE (job_id, task_id, k)), 0)   -- a pending task has no event row
FROM normalized n
LEFT JOIN event_normalized e ON e.job_id = n.job_id AND e.task_id = n.task_id AND e.k = n.k
WHERE n.k >= 0
ORDER BY n.job_id, n.k, n.task_id
