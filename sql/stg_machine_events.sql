-- Typed staging view over the raw machine_events table (Google clusterdata-2011-2,
-- one part). Event types: 0 ADD, 1 REMOVE, 2 UPDATE. CPUs and memory are
-- normalized to the largest machine (1.0).
CREATE OR REPLACE VIEW stg_machine_events AS
SELECT * FROM read_csv('${raw_dir}/machine_events/part-*-of-*.csv.gz',
    header = false, delim = ',', quote = '"', escape = '"', nullstr = '',
    compression = 'gzip', auto_detect = false, filename = true,
    columns = {
        'time': 'BIGINT', 'machine_id': 'BIGINT', 'event_type': 'INTEGER',
        'platform_id': 'VARCHAR', 'cpus': 'DOUBLE', 'memory': 'DOUBLE'
    });
