-- One row per attempt of every task of every job (all jobs, not only the
-- selected ones): an attempt starts at a SCHEDULE and ends at the next
-- terminal event (EVICT 2, FAIL 3, FINISH 4, KILL 5, LOST 6) of the same task.
-- Events are numbered in time order; at equal times a terminal event comes
-- before a SCHEDULE (it ends the previous attempt). Terminal events before the
-- first SCHEDULE (a task killed while pending) belong to attempt 0 and are
-- dropped; end_event is NULL for an attempt still running at the end of the
-- events read. Times in microseconds (0 = before the window, 2^63-1 = after).
-- The SCHEDULE row's requests, priority and constraint are kept: event_features.sql
-- sums the requests of what runs on a machine at a time.
WITH ev AS (
    SELECT job_id, task_index, time, event_type, machine_id,
        cpu_request, memory_request, disk_request, priority, different_machine,
        sum(CASE WHEN event_type = 1 THEN 1 ELSE 0 END) OVER (
            PARTITION BY job_id, task_index
            ORDER BY time, CASE WHEN event_type = 1 THEN 1 ELSE 0 END
            ROWS UNBOUNDED PRECEDING)                                   AS attempt
    FROM stg_task_events
    WHERE event_type BETWEEN 1 AND 6 AND ${job_slice}   -- a slice of jobs (bounded memory)
)
SELECT
    '${trace}'                                                          AS trace,
    job_id,
    task_index                                                          AS task_id,
    attempt,
    min(time) FILTER (WHERE event_type = 1)                             AS start_us,
    arg_min(machine_id, time) FILTER (WHERE event_type = 1)             AS machine_id,
    min(time) FILTER (WHERE event_type BETWEEN 2 AND 6)                 AS end_us,
    arg_min(event_type, time) FILTER (WHERE event_type BETWEEN 2 AND 6) AS end_event,
    arg_min(cpu_request, time) FILTER (WHERE event_type = 1)            AS cpu_request,
    arg_min(memory_request, time) FILTER (WHERE event_type = 1)         AS memory_request,
    arg_min(disk_request, time) FILTER (WHERE event_type = 1)           AS disk_request,
    arg_min(priority, time) FILTER (WHERE event_type = 1)               AS priority,
    arg_min(different_machine, time) FILTER (WHERE event_type = 1)      AS different_machine
FROM ev
WHERE attempt >= 1
GROUP BY job_id, task_index, attempt
ORDER BY job_id, task_id, attempt
