-- NURD's sensitivity to alpha and the straggler quantile, beside the reference rules
-- (stragglers.prediction.replay.protocol.nurd_sensitivity): means over jobs; alpha is NULL for the rules.
CREATE TABLE IF NOT EXISTS nurd_sensitivity (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, alpha DOUBLE, quantile DOUBLE, n_jobs INTEGER,
    f1 DOUBLE, tpr DOUBLE, fpr DOUBLE, f1_auc DOUBLE, median_lead DOUBLE, settings VARCHAR
);
