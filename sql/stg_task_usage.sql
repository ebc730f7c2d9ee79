-- Typed staging view over the raw task_usage parts (Google clusterdata-2011-2).
-- One row per (task, machine, measurement window); windows are at most 300 s.
CREATE OR REPLACE VIEW stg_task_usage AS
SELECT * FROM read_csv('${raw_dir}/task_usage/part-*-of-*.csv.gz',
    header = false, delim = ',', quote = '"', escape = '"', nullstr = '',
    compression = 'gzip', auto_detect = false, filename = true,
    columns = {
        'start_time': 'BIGINT', 'end_time': 'BIGINT', 'job_id': 'BIGINT',
        'task_index': 'BIGINT', 'machine_id': 'BIGINT',
        'cpu_rate': 'DOUBLE', 'canonical_memory': 'DOUBLE', 'assigned_memory': 'DOUBLE',
        'unmapped_page_cache': 'DOUBLE', 'total_page_cache': 'DOUBLE',
        'maximum_memory': 'DOUBLE', 'disk_io_time': 'DOUBLE', 'local_disk_space': 'DOUBLE',
        'maximum_cpu_rate': 'DOUBLE', 'maximum_disk_io_time': 'DOUBLE',
        'cpi': 'DOUBLE', 'mai': 'DOUBLE', 'sample_portion': 'DOUBLE',
        'aggregation_type': 'INTEGER', 'sampled_cpu_usage': 'DOUBLE'
    });
