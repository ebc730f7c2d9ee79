-- The operator's protocol (issue 26; docs/EVALUATION.md): same columns as the table without the prefix.
-- Checkpoints where a method could not fit: it flagged nothing there.
CREATE TABLE IF NOT EXISTS operator_method_fallbacks (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, job_id BIGINT NOT NULL,
    k INTEGER, checkpoint_s DOUBLE, reason VARCHAR
);
