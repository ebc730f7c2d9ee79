-- The operator's protocol (issue 26; docs/EVALUATION.md): same columns as the table without the prefix.
-- What produced each method's rows: settings, hyperparameters, seed, timing.
CREATE TABLE IF NOT EXISTS operator_evaluation_runs (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, n_jobs INTEGER, n_jobs_skipped INTEGER,
    settings JSON, hyperparameters JSON, seconds DOUBLE, finished_at TIMESTAMP
);
