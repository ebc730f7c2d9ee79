-- Typed staging view over the raw job_events parts (Google clusterdata-2011-2).
-- Times are microseconds (0 = before the trace window, 2^63-1 = after it).
CREATE OR REPLACE VIEW stg_job_events AS
SELECT * FROM ${read};
