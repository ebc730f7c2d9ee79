-- Typed staging view over the raw machine_events table (Google clusterdata-2011-2,
-- one part). Event types: 0 ADD, 1 REMOVE, 2 UPDATE. CPUs and memory are
-- normalized to the largest machine (1.0).
CREATE OR REPLACE VIEW stg_machine_events AS
SELECT * FROM ${read};
