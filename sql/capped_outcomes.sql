-- Every method at every budget through the replay engine (stragglers/prediction/engine; rows by
-- stragglers/prediction/verdicts/sweep.py job_rows): per (method, point of its sweep, cap, job) under the
-- operator's protocol, the JCT reduction and the extra machine time (shares of the job's) when, at
-- every check of the job, the tasks the point ranks get copies only while the cap allows (cap
-- '0.02': a budget of 2% of the job's machine time as the scheduler can put it at the check;
-- 'hadoop': Hadoop's caps on copies running at once; 'none': a copy per flag), mean over the
-- completion seeds; n_copies: copies started, mean over the seeds; n_flagged: tasks the point flagged
-- while they ran. The oracle's rows (point 'capped'): the tasks that truly end last copied first,
-- where the copy wins, at the same checks under the same cap.
CREATE TABLE IF NOT EXISTS capped_outcomes (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, point VARCHAR NOT NULL, cap VARCHAR NOT NULL,
    job_id BIGINT NOT NULL, jct_reduction DOUBLE, extra_machine_share DOUBLE, n_copies DOUBLE
);
-- columns added after the table's first version (a warehouse built before keeps its rows)
ALTER TABLE capped_outcomes ADD COLUMN IF NOT EXISTS n_flagged INTEGER;
