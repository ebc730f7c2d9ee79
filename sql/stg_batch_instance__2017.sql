-- Typed staging view over Alibaba cluster-trace-v2017 batch_instance.csv,
-- mapped onto the v2018 columns so the same selection SQL runs on both.
-- v2017 has no instance name: one is made from the row's identity.
CREATE OR REPLACE VIEW stg_batch_instance__2017 AS
SELECT
    'ins_' || job_id || '_' || task_id || '_' || coalesce(machine_id, '') || '_' || coalesce(seq_no, 0)
        || '_' || coalesce(start_timestamp, 0)           AS instance_name,
    task_id                                              AS task_name,
    job_id                                               AS job_name,
    NULL::VARCHAR                                        AS task_type,
    status,
    start_timestamp                                      AS start_time,
    end_timestamp                                        AS end_time,
    machine_id,
    seq_no,
    total_seq_no,
    cpu_avg,
    cpu_max,
    mem_avg,
    mem_max,
    filename
FROM ${read};
