-- Typed staging view over Alibaba cluster-trace-v2018 batch_instance.csv
-- (no header; real column order). Times in seconds; cpu in 1/100 core;
-- memory normalized 0-100; empty field = NULL.
CREATE OR REPLACE VIEW stg_batch_instance AS
SELECT * FROM read_csv('${csv_path}',
    header = false, delim = ',', quote = '"', escape = '"', nullstr = '',
    auto_detect = false, filename = true,
    columns = {
        'instance_name': 'VARCHAR', 'task_name': 'VARCHAR', 'job_name': 'VARCHAR',
        'task_type': 'VARCHAR', 'status': 'VARCHAR', 'start_time': 'BIGINT', 'end_time': 'BIGINT',
        'machine_id': 'VARCHAR', 'seq_no': 'BIGINT', 'total_seq_no': 'BIGINT',
        'cpu_avg': 'DOUBLE', 'cpu_max': 'DOUBLE', 'mem_avg': 'DOUBLE', 'mem_max': 'DOUBLE'
    });
