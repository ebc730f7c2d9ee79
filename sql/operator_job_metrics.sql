-- The operator's protocol (issue 26; docs/EVALUATION.md): same columns as the table without the prefix.
-- Per-job TPR/FPR/FNR/F1 over the tasks running at t0, with the counts, and
-- the earliness of the flags (docs/EVALUATION.md): f1_auc = mean F1 at
-- normalized times k/10, k = 1..10; median_lead = median over true positives
-- of (latency - flagged_at_s) / tau (NULL without a true positive).
CREATE TABLE IF NOT EXISTS operator_job_metrics (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, job_id BIGINT NOT NULL,
    tp INTEGER, fp INTEGER, fn INTEGER, tn INTEGER,
    tpr DOUBLE, fpr DOUBLE, fnr DOUBLE, f1 DOUBLE,
    n_scored INTEGER, n_checkpoints INTEGER, n_fallbacks INTEGER, seconds DOUBLE,
    f1_auc DOUBLE, median_lead DOUBLE
);

