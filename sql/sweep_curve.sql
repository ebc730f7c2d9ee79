-- Every method's cost curve under the operator's protocol (stragglers/prediction/verdicts/sweep.py
-- curve_table): per (trace, method, point of its flag threshold's sweep) the mean over jobs of the
-- JCT reduction and of the extra machine time (shares), speculative copies, unlimited machines.
-- Built by asset operator_budgets from the uncapped rows of operator_capped_outcomes (the engine).
CREATE TABLE IF NOT EXISTS sweep_curve (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, point VARCHAR NOT NULL, n_jobs INTEGER,
    jct_reduction DOUBLE, extra_machine_share DOUBLE
);
