-- The replay clock of every selected job (docs/PROTOCOL.md section 4), in task
-- time (seconds since each task's own first SCHEDULE), exact in microseconds:
--   t0  = latency of the ceil(${initial_fraction} * n)-th fastest task (at least
--         the 1st): by then ${initial_fraction} of the tasks have finished;
--   tau = the job's ${quantile} latency quantile (straggler threshold);
--   checkpoint k = t0 + k * step while < tau. Step (SelectionSettings.step_us_sql):
--   Google grid '${checkpoint_grid}': 'fixed' = ${checkpoint_step_s} s (one usage
--   window; a job with tau - t0 <= the step gets only k = 0 and is not evaluated),
--   'equal' = (tau - t0) / ${checkpoint_steps}, 'capped' = the smaller of the two
--   (long jobs keep the window step, short ones get ${checkpoint_steps} checkpoints);
--   the Alibaba grid divides [t0, tau) in ${alibaba_steps} equal steps.
-- k = 0 is the initial checkpoint (first training set, rho and delta).
WITH ranked AS (
    SELECT job_id, latency_us,
        row_number() OVER (PARTITION BY job_id ORDER BY latency_us, task_id) AS r,
        count(*) OVER (PARTITION BY job_id) AS n
    FROM tasks WHERE trace = '${trace}'
),
clock AS (
    SELECT job_id,
        any_value(n)                                                         AS n_finished,
        max(latency_us) FILTER (WHERE r = greatest(1, ceil(${initial_fraction} * n))) AS t0_us,
        quantile_cont(latency_us, ${quantile})                               AS tau_us
    FROM ranked
    GROUP BY job_id
)
SELECT
    '${trace}'                                  AS trace,
    c.job_id,
    g.k::INTEGER                                AS k,
    (c.t0_us + g.k * ${step_us})::BIGINT        AS checkpoint_us,
    (c.t0_us + g.k * ${step_us}) / 1e6          AS checkpoint_s,
    c.t0_us / 1e6                               AS t0_s,
    c.tau_us / 1e6                              AS tau_s,
    c.n_finished
FROM clock c,
     generate_series(0, greatest(0, ceil((c.tau_us - c.t0_us) / ${step_us}) - 1)::BIGINT) AS g(k)
WHERE c.t0_us + g.k * ${step_us} < c.tau_us OR g.k = 0
ORDER BY c.job_id, k
