-- Typed staging view over the raw job_events parts (Google clusterdata-2011-2).
-- Explicit names and types: DuckDB never guesses types on the real trace.
-- Times are microseconds (0 = before the trace window, 2^63-1 = after it).
CREATE OR REPLACE VIEW stg_job_events AS
SELECT * FROM read_csv('${raw_dir}/job_events/part-*-of-*.csv.gz',
    header = false, delim = ',', quote = '"', escape = '"', nullstr = '',
    compression = 'gzip', auto_detect = false, filename = true,
    columns = {
        'time': 'BIGINT', 'missing_info': 'INTEGER', 'job_id': 'BIGINT',
        'event_type': 'INTEGER', 'user_name': 'VARCHAR', 'scheduling_class': 'INTEGER',
        'job_name': 'VARCHAR', 'logical_job_name': 'VARCHAR'
    });
