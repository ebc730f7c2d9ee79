-- Per (trace, method, job), speculative copies with unlimited machines, mean over seeds: the JCT
-- reduction and the extra machine time's share (stragglers/prediction/copies/completion.py
-- speculation_jobs), for the survival family and the free rules only: what the report's intervals
-- against the free rules need. Built by asset completion_times.
CREATE TABLE IF NOT EXISTS speculation_job_times (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, job_id VARCHAR NOT NULL,
    jct_reduction DOUBLE, extra_machine_share DOUBLE
);
