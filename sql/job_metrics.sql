-- Per-job TPR/FPR/FNR/F1 over the tasks running at t0, with the counts.
CREATE TABLE IF NOT EXISTS job_metrics (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, job_id BIGINT NOT NULL,
    tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,
    tpr DOUBLE, fpr DOUBLE, fnr DOUBLE, f1 DOUBLE,
    n_scored INTEGER, n_checkpoints INTEGER, n_fallbacks INTEGER, seconds DOUBLE
);
