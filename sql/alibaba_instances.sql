-- Alibaba: a task (job_name, task_name) plays the job, an instance plays the
-- task (docs/PROTOCOL.md section 1). Stable integer ids: job_id ranks the
-- (job_name, task_name) pairs, task_id ranks the instances within a job.
-- An instance is kept when Terminated inside the trace with end > start.
CREATE OR REPLACE VIEW alibaba_instances AS
SELECT
    dense_rank() OVER (ORDER BY job_name, task_name)                                   AS job_id,
    row_number() OVER (PARTITION BY job_name, task_name
                       ORDER BY instance_name, start_time, end_time, machine_id)       AS task_id,
    *,
    CASE
        WHEN status IS NULL                                  THEN 'no_status'
        WHEN status <> 'Terminated'                          THEN lower(status)
        WHEN start_time IS NULL OR end_time IS NULL          THEN 'missing_times'
        WHEN start_time <= 0 OR end_time <= start_time       THEN 'bad_times'
        ELSE 'finished'
    END AS end_state
FROM stg_batch_instance
WHERE job_name IS NOT NULL AND task_name IS NOT NULL;
