-- Typed staging view over the raw task_events parts (Google clusterdata-2011-2).
CREATE OR REPLACE VIEW stg_task_events AS
SELECT * FROM ${read};
