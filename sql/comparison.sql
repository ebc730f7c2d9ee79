-- Table 3 of the paper, regenerated: per trace and method, means over jobs
-- with 95% bootstrap intervals (rows computed in nurd.reports.table3).
CREATE TABLE IF NOT EXISTS comparison (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, n_jobs INTEGER,
    tpr DOUBLE, tpr_lo DOUBLE, tpr_hi DOUBLE, fpr DOUBLE, fpr_lo DOUBLE, fpr_hi DOUBLE,
    fnr DOUBLE, fnr_lo DOUBLE, fnr_hi DOUBLE, f1 DOUBLE, f1_lo DOUBLE, f1_hi DOUBLE,
    pooled_f1 DOUBLE, pooled_f1_lo DOUBLE, pooled_f1_hi DOUBLE, best_f1 BOOLEAN
);
