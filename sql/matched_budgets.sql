-- Every method at every budget (stragglers/prediction/sweep.py budget_table; the report's
-- "matched_budgets"): per (trace, method, budget of extra machine time), the method's flag cut
-- chosen per job on the jobs that ended before it, scored on that job; its difference with the best
-- free rule at that budget with a 95% paired bootstrap interval over jobs; the curve's in-sample best
-- within budget; the area under the curve to 5%. Built by asset operator_budgets from operator_sweep_outcomes.
CREATE TABLE IF NOT EXISTS matched_budgets (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, budget DOUBLE NOT NULL, n_jobs INTEGER,
    jct_reduction DOUBLE, jct_lo DOUBLE, jct_hi DOUBLE, extra_machine_share DOUBLE, point_mode VARCHAR,
    jobs_no_copy INTEGER, reference VARCHAR, diff DOUBLE, diff_lo DOUBLE, diff_hi DOUBLE,
    in_sample_jct_reduction DOUBLE, in_sample_extra_machine_share DOUBLE, in_sample_point VARCHAR,
    area_to_5pct DOUBLE, spark_diff DOUBLE, spark_diff_lo DOUBLE, spark_diff_hi DOUBLE, flags_equal_flag_all BOOLEAN
);
