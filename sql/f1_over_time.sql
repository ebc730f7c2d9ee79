-- F1 of the flags raised up to normalized time k/10 of [t0, tau], per job.
CREATE TABLE IF NOT EXISTS f1_over_time (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, job_id BIGINT NOT NULL,
    k INTEGER NOT NULL, f1 DOUBLE
);
