-- Where the paper's numbers come from (stragglers.prediction.replay.protocol.protocol_ablation):
-- per trace, protocol variant and method, means over jobs; `settings` records every
-- protocol setting of the row (JSON), so each row can be re-run.
CREATE TABLE IF NOT EXISTS protocol_ablation (
    trace VARCHAR NOT NULL, variant VARCHAR NOT NULL, method VARCHAR NOT NULL, n_jobs INTEGER,
    f1 DOUBLE, tpr DOUBLE, fpr DOUBLE, f1_auc DOUBLE, median_lead DOUBLE, settings VARCHAR
);
