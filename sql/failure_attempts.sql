-- El-Sayed et al. (ICDCS 2017), Section V-D2: every attempt of every task with
-- its task's configuration and early usage (failure_tasks), its outcome (end
-- event; NULL = still running) and PastAttemptsFlag (an earlier attempt of the
-- same task FAILed). Durations in seconds where start and end are in the window.
SELECT
    '${trace}' AS trace,
    a.job_id, a.task_id, a.attempt, a.start_us, a.end_us, a.end_event,
    CASE WHEN a.start_us > 0 AND a.end_us < 9223372036854775807 THEN (a.end_us - a.start_us) / 1e6 END
        AS duration_s,
    coalesce(sum(CASE WHEN a.end_event = 3 THEN 1 ELSE 0 END) OVER (
        PARTITION BY a.job_id, a.task_id ORDER BY a.attempt
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) > 0      AS past_attempts_flag,
    t.user_name, t.logical_job_name, t.scheduling_class, t.priority, t.n_tasks, t.different_machine,
    t.cpu_request, t.memory_request, t.disk_request, t.early_cpu, t.early_memory, t.early_io,
    t.final_event, t.attempts
FROM task_attempts a
JOIN failure_tasks t ON t.trace = '${trace}' AND t.job_id = a.job_id AND t.task_id = a.task_id
WHERE a.trace = '${trace}'
ORDER BY a.job_id, a.task_id, a.attempt
