-- Typed staging view over Alibaba cluster-trace-v2018 batch_instance.csv
-- (no header; real column order). Times in seconds; cpu in 1/100 core;
-- memory normalized 0-100; empty field = NULL.
CREATE OR REPLACE VIEW stg_batch_instance AS
SELECT * FROM ${read};
