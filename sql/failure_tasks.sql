-- El-Sayed et al. (ICDCS 2017), Table IV, per task of EVERY job with task
-- events: the configuration (job's user, logical name and scheduling class
-- from job_events; priority, requests and the different-machine restriction
-- from task_events), the task's final status (the end event of its last
-- attempt; NULL = still running at the end of the events read), its
-- AttemptFailFlag (an attempt before the last one FAILed) and early usage.
WITH task_conf AS (
    SELECT job_id, task_index AS task_id,
        max(priority)           AS priority,
        avg(cpu_request)        AS cpu_request,
        avg(memory_request)     AS memory_request,
        avg(disk_request)       AS disk_request,
        max(different_machine)  AS different_machine,
        -- degree of parallelism: every task index of the job in task_events, scheduled or not
        count(*) OVER (PARTITION BY job_id) AS n_tasks
    FROM stg_task_events
    GROUP BY job_id, task_index
),
job_conf AS (
    SELECT job_id,
        arg_min(user_name, time)          AS user_name,
        arg_min(logical_job_name, time)   AS logical_job_name,
        arg_min(scheduling_class, time)   AS scheduling_class,
        arg_max(event_type, {'t': time, 'e': event_type})
            FILTER (WHERE event_type BETWEEN 2 AND 6)    AS job_end_event
    FROM stg_job_events
    GROUP BY job_id
),
per_task AS (
    SELECT job_id, task_id,
        count(*)                                            AS attempts,
        arg_max(end_event, attempt)                         AS final_event,
        count(*) FILTER (WHERE end_event = 3)               AS failed_attempts,
        bool_or(end_event = 3 AND attempt < last_attempt)   AS attempt_fail_flag,
        min(start_us) FILTER (WHERE attempt = 1)            AS first_start_us,
        max(end_us)                                         AS last_end_us
    FROM (SELECT *, max(attempt) OVER (PARTITION BY job_id, task_id) AS last_attempt
          FROM task_attempts WHERE trace = '${trace}')
    GROUP BY job_id, task_id
)
SELECT
    '${trace}' AS trace,
    t.job_id, t.task_id,
    j.user_name, j.logical_job_name, j.scheduling_class, j.job_end_event,
    c.priority, c.cpu_request, c.memory_request, c.disk_request, c.different_machine,
    c.n_tasks,
    t.attempts, t.failed_attempts, t.final_event, t.attempt_fail_flag,
    t.first_start_us, t.last_end_us,
    u.early_cpu, u.early_memory, u.early_io
FROM per_task t
JOIN task_conf c USING (job_id, task_id)
LEFT JOIN job_conf j USING (job_id)
LEFT JOIN early_usage u ON u.trace = '${trace}' AND u.job_id = t.job_id AND u.task_id = t.task_id
ORDER BY t.job_id, t.task_id
