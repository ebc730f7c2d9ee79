-- The operator's answer on Spark event logs (stragglers/prediction/spark_speculation.py answer): the
-- sentence the report and the summary open with, the spark-defaults.conf block to copy ('' when no
-- setting is chosen), the counts behind it and the chosen setting's and Spark 4.0's defaults' scores
-- on the later stages (percent of stage time cut, percent extra executor time). One row per trace;
-- built by asset spark_speculation, read by comparison_tables.
CREATE TABLE IF NOT EXISTS spark_answer (
    trace VARCHAR NOT NULL, answer VARCHAR NOT NULL, conf VARCHAR NOT NULL, stages BIGINT, applications BIGINT,
    set_aside_short BIGINT, set_aside_one_host BIGINT, earlier BIGINT, later BIGINT, budget_pct DOUBLE,
    chosen VARCHAR, chosen_cut_pct DOUBLE, chosen_cut_lo DOUBLE, chosen_cut_hi DOUBLE, chosen_extra_pct DOUBLE,
    defaults_rule VARCHAR, defaults_cut_pct DOUBLE, defaults_extra_pct DOUBLE
);
