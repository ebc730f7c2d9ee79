-- The reduction in job completion time when each method's flagged tasks are relaunched (the
-- paper's Algorithm 2, unlimited machines, `machines` NULL; Algorithm 3, one row per machine
-- count): mean over seeds of the mean over jobs, and its std over seeds
-- (stragglers/prediction/copies/completion.py completion_table). Built by asset completion_times; the
-- report's completion.csv.
CREATE TABLE IF NOT EXISTS completion_times (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, algorithm VARCHAR NOT NULL, machines DOUBLE,
    reduction_mean DOUBLE, reduction_std_over_seeds DOUBLE, n_jobs BIGINT, seeds VARCHAR
);
