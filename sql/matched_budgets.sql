-- Every method at every budget (stragglers/prediction/sweep.py budget_table; the report's
-- "matched_budgets"): per (trace, method, budget of extra machine time), on the scored jobs (the half
-- of the trace's jobs that ended last): the method's flag cut chosen per job on the jobs that ended
-- before it, scored on that job, the budget enforced at every decision when ``enforced`` (else
-- matched on the earlier jobs' spend); the learned method and the free rule named on the half that
-- ended first (``named``) and their paired difference (``named_diff*``); every method's difference
-- with the pre-named free rule and with the tuned Spark rule, Holm-adjusted per (trace, budget); the
-- curve's in-sample best within budget; the area under the curve to 5%; the realized spend
-- (``jobs_over_budget``, ``extra_p90``) and the capped oracle's headroom.
-- Built by asset operator_budgets from operator_sweep_outcomes and operator_capped_outcomes.
CREATE TABLE IF NOT EXISTS matched_budgets (
    trace VARCHAR NOT NULL, method VARCHAR NOT NULL, budget DOUBLE NOT NULL, n_jobs INTEGER, n_jobs_choosing INTEGER,
    jct_reduction DOUBLE, jct_lo DOUBLE, jct_hi DOUBLE, extra_machine_share DOUBLE, point_mode VARCHAR,
    jobs_no_copy INTEGER, choosing_jct_reduction DOUBLE, named VARCHAR, reference VARCHAR,
    diff DOUBLE, diff_lo DOUBLE, diff_hi DOUBLE, diff_p_holm DOUBLE,
    named_diff DOUBLE, named_diff_lo DOUBLE, named_diff_hi DOUBLE,
    in_sample_jct_reduction DOUBLE, in_sample_extra_machine_share DOUBLE, in_sample_point VARCHAR,
    area_to_5pct DOUBLE, spark_diff DOUBLE, spark_diff_lo DOUBLE, spark_diff_hi DOUBLE, spark_diff_p_holm DOUBLE,
    enforced BOOLEAN, jobs_over_budget INTEGER, extra_p90 DOUBLE, headroom DOUBLE, flags_equal_flag_all BOOLEAN
);
-- columns added after the table's first version (a warehouse built before keeps its rows)
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS n_jobs_choosing INTEGER;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS choosing_jct_reduction DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS named VARCHAR;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS diff_p_holm DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS named_diff DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS named_diff_lo DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS named_diff_hi DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS spark_diff_p_holm DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS enforced BOOLEAN;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS jobs_over_budget INTEGER;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS extra_p90 DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS headroom DOUBLE;
