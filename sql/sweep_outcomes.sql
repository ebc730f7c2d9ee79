-- Every method's cost curve points (stragglers/prediction/verdicts/sweep.py): per (method, point of its flag
-- threshold's sweep, job) under the operator's protocol, the JCT reduction and the extra machine
-- time (shares of the job's) with a speculative copy per flag (the replay engine uncapped: the rows of
-- capped_outcomes with cap 'none'), mean over the completion seeds. point 'default' is the method's
-- own flag rule; the others are its sweep's cuts ('1.25', 'q0.75-m1.5-min0.1' for Spark's rule...).
-- n_flagged: tasks the point flagged while they ran.
CREATE TABLE IF NOT EXISTS sweep_outcomes (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, point VARCHAR NOT NULL, job_id BIGINT NOT NULL,
    jct_reduction DOUBLE, extra_machine_share DOUBLE, n_flagged INTEGER
);
