-- Every Alibaba task (job_name, task_name) with its number of instances.
-- Every task is a candidate (the traces carry no production flag).
CREATE OR REPLACE VIEW job_candidates AS
SELECT
    job_id,
    any_value(job_name)                              AS job_name,
    any_value(task_name)                             AS task_name,
    count(*)                                         AS n_tasks,
    count(*) FILTER (WHERE end_state = 'finished')   AS n_finished,
    true                                             AS is_production
FROM alibaba_instances
GROUP BY job_id;
