-- The survival family's cost-aware threshold over the price of machine time
-- (stragglers/prediction/evaluation/history.py): per lambda, each job's threshold chosen on the jobs that ended
-- before it, and the outcome over all jobs (speculative copies, a machine always free).
CREATE TABLE IF NOT EXISTS cost_curve (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, cost_lambda DOUBLE NOT NULL, configured BOOLEAN,
    n_jobs INTEGER, n_jobs_with_history INTEGER, threshold_mean DOUBLE,
    jct_reduction DOUBLE, extra_machine_share DOUBLE, f1_mean DOUBLE
);
