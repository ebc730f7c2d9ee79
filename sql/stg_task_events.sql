-- Typed staging view over the raw task_events parts (Google clusterdata-2011-2).
CREATE OR REPLACE VIEW stg_task_events AS
SELECT * FROM read_csv('${raw_dir}/task_events/part-*-of-*.csv.gz',
    header = false, delim = ',', quote = '"', escape = '"', nullstr = '',
    compression = 'gzip', auto_detect = false, filename = true,
    columns = {
        'time': 'BIGINT', 'missing_info': 'INTEGER', 'job_id': 'BIGINT',
        'task_index': 'BIGINT', 'machine_id': 'BIGINT', 'event_type': 'INTEGER',
        'user_name': 'VARCHAR', 'scheduling_class': 'INTEGER', 'priority': 'INTEGER',
        'cpu_request': 'DOUBLE', 'memory_request': 'DOUBLE', 'disk_request': 'DOUBLE',
        'different_machine': 'INTEGER'
    });
