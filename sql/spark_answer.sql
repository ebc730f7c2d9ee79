-- The operator's answer on Spark event logs (stragglers/prediction/verdicts/spark_answer.py), one row per (trace,
-- budget of extra executor time): the stages and applications it rests on, the stages scored (each
-- named on the stages that ended before it started), what the applications run, the setting chosen on
-- every stage within the budget with its mean stage-time cut there, that mean's minimum detectable
-- effect and its spend ('none': no setting within the budget cuts stage time), the setting to write
-- (NULL: keep what runs), the verdict in one sentence and the spark-defaults.conf block. Built by
-- asset operator_budgets (the same function as `nurd-spark advise`); read by comparison_tables.
CREATE TABLE IF NOT EXISTS spark_answer (
    trace VARCHAR NOT NULL, budget DOUBLE, stages BIGINT, applications BIGINT, scored BIGINT, current VARCHAR,
    chosen VARCHAR, chosen_mean DOUBLE, chosen_mde DOUBLE, chosen_spend DOUBLE, chosen_stages BIGINT,
    recommended VARCHAR, verdict VARCHAR, conf VARCHAR
);
-- columns added after the table's first version (a warehouse built before keeps its rows)
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS budget DOUBLE;
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS scored BIGINT;
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS current VARCHAR;
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS chosen_mean DOUBLE;
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS chosen_mde DOUBLE;
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS chosen_spend DOUBLE;
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS chosen_stages BIGINT;
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS recommended VARCHAR;
ALTER TABLE spark_answer ADD COLUMN IF NOT EXISTS verdict VARCHAR;
