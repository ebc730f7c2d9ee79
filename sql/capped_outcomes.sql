-- Every method at every budget, the budget enforced (stragglers/prediction/sweep.py capped_rows): per
-- (method, point of its sweep, cap, job) under the operator's protocol, the JCT reduction and the
-- extra machine time (shares of the job's) when the copies its flags ask for start, at each decision,
-- in its ranking only while the cap allows (cap '0.02': the copies' machine time within 2% of the
-- job's machine time so far; 'hadoop': Hadoop's caps on copies running at once), mean over the
-- completion seeds; n_copies: copies started, mean over the seeds. The oracle's rows (point
-- 'capped'): the tasks that truly end last copied first, under the same cap.
CREATE TABLE IF NOT EXISTS capped_outcomes (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, point VARCHAR NOT NULL, cap VARCHAR NOT NULL,
    job_id BIGINT NOT NULL, jct_reduction DOUBLE, extra_machine_share DOUBLE, n_copies DOUBLE
);
