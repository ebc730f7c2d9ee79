-- Every method at every budget (stragglers/prediction/verdicts/budgets.py; the report's "matched_budgets"): per
-- (trace, method, budget of extra machine time, cap_mode), on the trace's scored jobs (those started
-- after a warm-up of earlier jobs ended: stragglers/prediction/verdicts/verdict.py), each job's point of the
-- method chosen on the jobs that ended before its first decision and scored on the job through the
-- replay engine: under the budget enforced at every check (cap_mode 'enforced'), or, for Spark's rule
-- as Spark runs it, uncapped with its setting matched within the budget on those earlier jobs
-- ('as Spark runs it'). The realized spend (mean, over the budget, jobs above it, 90th percentile);
-- every method minus the free rule named now and minus the tuned Spark rule, Holm-adjusted per
-- (trace, budget); the best point in hindsight on the scored jobs; the area under the uncapped cost
-- curve to 5%; the headroom (per scored job the largest cut of the oracle and of every point of every
-- policy that reads no labels, at the same checks under the same cap), the oracle's mean and the jobs
-- some policy beat it on. Built by asset operator_budgets from operator_capped_outcomes.
CREATE TABLE IF NOT EXISTS matched_budgets (
    trace VARCHAR NOT NULL,
    method VARCHAR NOT NULL,
    budget DOUBLE NOT NULL,
    cap_mode VARCHAR,
    reads_labels BOOLEAN,
    n_jobs INTEGER,
    jct_reduction DOUBLE,
    jct_lo DOUBLE,
    jct_hi DOUBLE,
    extra_machine_share DOUBLE,
    spend_over_budget DOUBLE,
    jobs_over_budget INTEGER,
    extra_p90 DOUBLE,
    copies DOUBLE,
    point_mode VARCHAR,
    jobs_no_copy INTEGER,
    diff DOUBLE,
    diff_lo DOUBLE,
    diff_hi DOUBLE,
    diff_p_holm DOUBLE,
    spark_diff DOUBLE,
    spark_diff_lo DOUBLE,
    spark_diff_hi DOUBLE,
    spark_diff_p_holm DOUBLE,
    in_sample_jct_reduction DOUBLE,
    in_sample_point VARCHAR,
    area_to_5pct DOUBLE,
    headroom DOUBLE,
    oracle DOUBLE,
    oracle_beaten_jobs INTEGER,
    flags_equal_flag_all BOOLEAN
);
-- columns added after the table's first version (a warehouse built before keeps its rows)
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS cap_mode VARCHAR;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS reads_labels BOOLEAN;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS n_jobs INTEGER;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS jct_reduction DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS jct_lo DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS jct_hi DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS extra_machine_share DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS spend_over_budget DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS jobs_over_budget INTEGER;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS extra_p90 DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS copies DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS point_mode VARCHAR;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS jobs_no_copy INTEGER;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS diff DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS diff_lo DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS diff_hi DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS diff_p_holm DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS spark_diff DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS spark_diff_lo DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS spark_diff_hi DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS spark_diff_p_holm DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS in_sample_jct_reduction DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS in_sample_point VARCHAR;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS area_to_5pct DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS headroom DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS oracle DOUBLE;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS oracle_beaten_jobs INTEGER;
ALTER TABLE matched_budgets ADD COLUMN IF NOT EXISTS flags_equal_flag_all BOOLEAN;
