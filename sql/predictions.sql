-- When each evaluated task was flagged (NULL = never), per trace and method.
CREATE TABLE IF NOT EXISTS predictions (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, job_id BIGINT NOT NULL,
    task_id BIGINT NOT NULL, flagged_at_s DOUBLE
);
