-- As completion_times, with speculative copies under the operator's protocol (a flag starts a copy,
-- the first attempt to finish wins): the JCT reduction, the p90 over jobs of the JCT change, the
-- extra machine time's share and the copies per job (stragglers/prediction/copies/completion.py
-- speculation_table). Built by asset completion_times; empty without operator_predictions.
CREATE TABLE IF NOT EXISTS speculation_times (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, algorithm VARCHAR NOT NULL, machines DOUBLE,
    reduction_mean DOUBLE, reduction_std_over_seeds DOUBLE, jct_change_p90 DOUBLE,
    extra_machine_share DOUBLE, n_copies_per_job DOUBLE, n_jobs BIGINT, seeds VARCHAR
);
