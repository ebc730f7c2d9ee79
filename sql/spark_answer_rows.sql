-- The operator's answer on Spark event logs side by side (stragglers/prediction/verdicts/spark_answer.py): per
-- (trace, budget) three rows on the scored stages: what the applications run, Spark 4.0's defaults,
-- and following the answer (each stage's setting chosen before it, or kept): the mean stage-time cut
-- (share of stage time) with its 95% bootstrap interval, the extra executor time (share of the
-- stages'), copies per stage, stages. Built by asset operator_budgets; read by comparison_tables.
CREATE TABLE IF NOT EXISTS spark_answer_rows (
    trace VARCHAR NOT NULL, budget DOUBLE, who VARCHAR, setting VARCHAR, cut DOUBLE, cut_lo DOUBLE, cut_hi DOUBLE,
    extra DOUBLE, copies DOUBLE, stages BIGINT
);
