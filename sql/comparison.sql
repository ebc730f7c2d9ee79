-- Table 3 of the paper, regenerated: per trace and method, means over jobs
-- with 95% bootstrap intervals (rows computed in stragglers.reports.comparison.table3),
-- the earliness of the flags (f1_auc, median_lead; docs/EVALUATION.md) and the
-- completion-time reduction (Algorithm 2 unlimited, Algorithm 3 mean over machine counts).
CREATE TABLE IF NOT EXISTS comparison (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, n_jobs INTEGER,
    tpr DOUBLE, tpr_lo DOUBLE, tpr_hi DOUBLE, fpr DOUBLE, fpr_lo DOUBLE, fpr_hi DOUBLE,
    fnr DOUBLE, fnr_lo DOUBLE, fnr_hi DOUBLE, f1 DOUBLE, f1_lo DOUBLE, f1_hi DOUBLE,
    pooled_f1 DOUBLE, pooled_f1_lo DOUBLE, pooled_f1_hi DOUBLE, best_f1 BOOLEAN,
    f1_auc DOUBLE, f1_auc_lo DOUBLE, f1_auc_hi DOUBLE,
    median_lead DOUBLE, median_lead_lo DOUBLE, median_lead_hi DOUBLE,
    completion_unlimited DOUBLE, completion_limited_avg DOUBLE
);
-- a warehouse made before these columns existed gets them
ALTER TABLE comparison ADD COLUMN IF NOT EXISTS f1_auc DOUBLE;
ALTER TABLE comparison ADD COLUMN IF NOT EXISTS f1_auc_lo DOUBLE;
ALTER TABLE comparison ADD COLUMN IF NOT EXISTS f1_auc_hi DOUBLE;
ALTER TABLE comparison ADD COLUMN IF NOT EXISTS median_lead DOUBLE;
ALTER TABLE comparison ADD COLUMN IF NOT EXISTS median_lead_lo DOUBLE;
ALTER TABLE comparison ADD COLUMN IF NOT EXISTS median_lead_hi DOUBLE;
ALTER TABLE comparison ADD COLUMN IF NOT EXISTS completion_unlimited DOUBLE;
ALTER TABLE comparison ADD COLUMN IF NOT EXISTS completion_limited_avg DOUBLE;
