-- The operator's protocol (issue 26; docs/EVALUATION.md): same columns as the table without the prefix.
-- When each evaluated task was flagged (NULL = never), per trace and method.
CREATE TABLE IF NOT EXISTS operator_predictions (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, job_id BIGINT NOT NULL,
    task_id BIGINT NOT NULL, flagged_at_s DOUBLE
);
