-- The operator's protocol (issue 26; docs/EVALUATION.md): same columns as the table without the prefix.
-- F1 of the flags raised up to normalized time k/10 of [t0, the job's end], per job.
CREATE TABLE IF NOT EXISTS operator_f1_over_time (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, job_id BIGINT NOT NULL,
    k INTEGER NOT NULL, f1 DOUBLE
);
