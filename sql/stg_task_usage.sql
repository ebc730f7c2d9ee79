-- Typed staging view over the raw task_usage parts (Google clusterdata-2011-2).
-- One row per (task, machine, measurement window); windows are at most 300 s.
CREATE OR REPLACE VIEW stg_task_usage AS
SELECT * FROM ${read};
