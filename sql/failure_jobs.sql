-- El-Sayed et al. (ICDCS 2017), Table IV, per job of EVERY job with task
-- events (from failure_tasks): configuration, outcome = the job's last terminal
-- event in job_events (3 FAIL, 4 FINISH, 5 KILL, 6 LOST; NULL = none, e.g.
-- still running at the trace's end), TaskFailFlag (some task attempt FAILed)
-- and the early usage means over its tasks with their coefficients of variation
-- across co-tasks (NULL where no task has usage).
SELECT
    '${trace}'                          AS trace,
    job_id,
    any_value(user_name)                AS user_name,
    any_value(logical_job_name)         AS logical_job_name,
    any_value(scheduling_class)         AS scheduling_class,
    any_value(job_end_event)            AS job_end_event,
    max(priority)                       AS priority,
    any_value(n_tasks)                  AS n_tasks,
    max(different_machine)              AS different_machine,
    avg(cpu_request)                    AS cpu_request,
    avg(memory_request)                 AS memory_request,
    avg(disk_request)                   AS disk_request,
    bool_or(failed_attempts > 0)        AS task_fail_flag,
    min(first_start_us)                 AS first_start_us,
    avg(early_cpu)                      AS early_cpu,
    avg(early_memory)                   AS early_memory,
    avg(early_io)                       AS early_io,
    stddev_samp(early_cpu) / nullif(avg(early_cpu), 0)          AS early_cpu_cov,
    stddev_samp(early_memory) / nullif(avg(early_memory), 0)    AS early_memory_cov,
    stddev_samp(early_io) / nullif(avg(early_io), 0)            AS early_io_cov
FROM failure_tasks
WHERE trace = '${trace}'
GROUP BY job_id
ORDER BY job_id
