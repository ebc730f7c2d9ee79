-- Scheduler-visible features of every (selected job, finished task, checkpoint),
-- computed from events only (docs/EVENT_FEATURES.md). Raw values (not normalized);
-- checkpoint_features.sql min-max normalizes them per (job, checkpoint) like the
-- usage features when the feature set includes them.
--
-- The as-of time of a row is absolute: the task's first SCHEDULE plus its elapsed
-- time on the replay clock, at_us = first_schedule_us + least(checkpoint_us - start, latency_us),
-- start = ${task_start} (0 on the paper's grid, the task's start on the job's wall clock on the
-- operator's: sql/operator_checkpoints.sql). A task not started at a checkpoint has no row there.
-- Every value below reads only events at or before at_us: each stream is a running
-- aggregate ordered by the time its value became known (a window frame ending at
-- the current row), and the row takes the stream's last entry at or before at_us
-- (an ASOF join). A value that needs a later event (a job's median latency) enters
-- its stream at the time that event happened. tests/test_event_features.py cuts the
-- trace at a time T and asserts bit-identical rows for every at_us <= T.
--
-- State per job: runs per slice of job ids (${job_slice}, bounded memory); the streams that
-- read every job (a machine's load and history, earlier runs of a logical name) are built
-- once before, in machine_streams and job_runs.
--
-- Inputs: tasks, ${checkpoints} (the grid: job_checkpoints, or operator_checkpoints for
-- operator_event_features), task_lifecycle (first lives of every task), task_attempts (the
-- attempts of the slice's jobs), machine_streams (machine_streams.sql), job_runs (submits,
-- ends, logical names and latencies of every job: job_runs.sql), stg_machine_events (capacities).
WITH sel AS (
    SELECT job_id, task_id, first_schedule_us, latency_us, ${task_start} AS start_us
    FROM ${tasks} WHERE trace = '${trace}' AND ${job_slice}
),
sel_jobs AS (SELECT DISTINCT job_id FROM sel),
grid AS (
    SELECT s.job_id, s.task_id, c.k, s.first_schedule_us,
        least(c.checkpoint_us - s.start_us, s.latency_us)                      AS elapsed_us,
        s.first_schedule_us + least(c.checkpoint_us - s.start_us, s.latency_us) AS at_us
    FROM sel s JOIN ${checkpoints} c ON c.trace = '${trace}' AND c.job_id = s.job_id
    WHERE c.checkpoint_us >= s.start_us
),
attempts AS (
    SELECT job_id, task_id, attempt, start_us, machine_id,
        CASE WHEN end_us < 9223372036854775807 THEN end_us END AS end_us, end_event,
        cpu_request, memory_request, disk_request, priority, different_machine
    FROM task_attempts WHERE trace = '${trace}' AND ${job_slice}
),
-- ---- the task: its attempts so far ------------------------------------------------
task_stream AS (
    -- per attempt of a selected task: how many so far, the time lost in earlier ones
    SELECT a.job_id, a.task_id, a.start_us, a.machine_id, a.attempt,
        -- an attempt ends before the next one starts, so the earlier ones have ended by then
        coalesce(sum(a.end_us - a.start_us) OVER (
            PARTITION BY a.job_id, a.task_id ORDER BY a.start_us, a.attempt
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)  AS lost_before_us
    FROM attempts a SEMI JOIN sel s ON s.job_id = a.job_id AND s.task_id = a.task_id
    WHERE a.start_us > 0
    QUALIFY row_number() OVER (PARTITION BY a.job_id, a.task_id, a.start_us ORDER BY a.attempt DESC) = 1
),
first_attempt AS (
    SELECT a.job_id, a.task_id, a.cpu_request, a.memory_request, a.disk_request, a.priority, a.different_machine
    FROM attempts a SEMI JOIN sel s ON s.job_id = a.job_id AND s.task_id = a.task_id
    WHERE a.attempt = 1
),
-- ---- the job's tasks, in the order their values became known ---------------------------
job_tasks AS (
    SELECT l.job_id, l.task_id, l.first_submit_us, l.first_schedule_us, l.final_finish_us, l.end_state
    FROM (SELECT * FROM task_lifecycle WHERE trace = '${trace}' AND ${job_slice}) l
    SEMI JOIN sel_jobs j ON j.job_id = l.job_id
),
job_submits AS (
    -- tasks submitted so far, and the highest task index among them (the index rank's scale)
    SELECT job_id, first_submit_us AS t_us,
        count(*) OVER w AS submitted, max(task_id) OVER w AS max_index
    FROM job_tasks WHERE first_submit_us > 0
    WINDOW w AS (PARTITION BY job_id ORDER BY first_submit_us, task_id ROWS UNBOUNDED PRECEDING)
    QUALIFY row_number() OVER (PARTITION BY job_id, first_submit_us ORDER BY task_id DESC) = 1
),
job_schedules AS (
    -- the median scheduling delay and requests of the job's tasks scheduled so far
    SELECT t.job_id, t.first_schedule_us AS t_us,
        median(t.first_schedule_us - t.first_submit_us) FILTER (WHERE t.first_submit_us > 0) OVER w AS med_delay_us,
        median(f.cpu_request) OVER w    AS med_cpu,
        median(f.memory_request) OVER w AS med_mem,
        median(f.disk_request) OVER w   AS med_disk
    FROM job_tasks t
    LEFT JOIN attempts f ON f.job_id = t.job_id AND f.task_id = t.task_id AND f.attempt = 1
    WHERE t.first_schedule_us > 0
    WINDOW w AS (PARTITION BY t.job_id ORDER BY t.first_schedule_us, t.task_id ROWS UNBOUNDED PRECEDING)
    QUALIFY row_number() OVER (PARTITION BY t.job_id, t.first_schedule_us ORDER BY t.task_id DESC) = 1
),
job_finishes AS (
    -- first lives finished so far: how many, their median and p75 latency
    SELECT job_id, final_finish_us AS t_us,
        count(*) OVER w AS finished,
        quantile_cont(final_finish_us - first_schedule_us, 0.5) OVER w  AS p50_us,
        quantile_cont(final_finish_us - first_schedule_us, 0.75) OVER w AS p75_us
    FROM job_tasks
    WHERE end_state = 'finished' AND first_schedule_us > 0
    WINDOW w AS (PARTITION BY job_id ORDER BY final_finish_us, task_id ROWS UNBOUNDED PRECEDING)
    QUALIFY row_number() OVER (PARTITION BY job_id, final_finish_us ORDER BY task_id DESC) = 1
),
job_deltas AS (
    SELECT job_id, start_us AS t_us, 1 AS d FROM attempts a SEMI JOIN sel_jobs j USING (job_id) WHERE start_us > 0
    UNION ALL
    SELECT job_id, end_us, -1 FROM attempts a SEMI JOIN sel_jobs j USING (job_id) WHERE start_us > 0 AND end_us IS NOT NULL
),
job_running AS (
    -- one row per (job, time): the deltas of a time are summed first, so ties have one value
    SELECT job_id, t_us, sum(sum(d)) OVER (PARTITION BY job_id ORDER BY t_us ROWS UNBOUNDED PRECEDING) AS running
    FROM job_deltas GROUP BY job_id, t_us
),
-- ---- machines -------------------------------------------------------------------------
capacity AS (
    SELECT machine_id, time AS t_us, cpus, memory, hash(platform_id) % 1000003 AS platform
    FROM stg_machine_events
    WHERE event_type IN (0, 2) AND isfinite(cpus) AND isfinite(memory)
    QUALIFY row_number() OVER (PARTITION BY machine_id, time ORDER BY event_type DESC, cpus DESC, memory DESC,
                                                                      platform_id DESC) = 1
),
-- The machine streams (machine_streams.sql: every job's attempts, built once), cut to the rows an
-- ASOF join of this slice can take: its as-of times lie in [lo + 1 h, hi] (lo: an hour before the
-- first, for the hour-ago join), so a row after hi is never taken, nor a row before lo but the last
-- one of its machine and stream. Same rows as the whole stream, but each slice reads (and holds)
-- its own time span of the streams, not the whole trace's.
span AS (SELECT min(at_us) - 3600000000 AS lo, max(at_us) AS hi FROM grid),
last_before AS (
    SELECT m.machine_id, m.stream, max(m.t_us) AS t_us
    FROM machine_streams m, span WHERE m.trace = '${trace}' AND m.t_us < span.lo GROUP BY m.machine_id, m.stream
),
machine_stream AS (
    SELECT m.* FROM machine_streams m, span
    WHERE m.trace = '${trace}' AND m.t_us >= span.lo AND m.t_us <= span.hi
    UNION ALL
    SELECT m.* FROM machine_streams m SEMI JOIN last_before b
      ON b.machine_id = m.machine_id AND b.stream = m.stream AND b.t_us = m.t_us
    WHERE m.trace = '${trace}'
),
machine_load AS (SELECT machine_id, t_us, running, cpu_sum, mem_sum FROM machine_stream WHERE stream = 'load'),
machine_bad AS (SELECT machine_id, t_us, bad FROM machine_stream WHERE stream = 'bad'),
machine_history AS (SELECT machine_id, t_us, ended, slowness FROM machine_stream WHERE stream = 'history'),
-- ---- recurring jobs: earlier runs of the same logical name -----------------------------------
job_info AS (SELECT * FROM job_runs WHERE trace = '${trace}'),
recurring_stream AS (
    -- every ended job of the trace (job_runs.sql), from its end
    SELECT logical_job_name, end_us AS t_us,
        count(*) OVER w AS runs,
        end_us - submit_us AS last_duration_us,
        p50_us AS last_p50_us, p90_us AS last_p90_us
    FROM job_info
    WHERE end_us IS NOT NULL AND logical_job_name IS NOT NULL AND submit_us > 0
    WINDOW w AS (PARTITION BY logical_job_name ORDER BY end_us, job_id ROWS UNBOUNDED PRECEDING)
    QUALIFY row_number() OVER (PARTITION BY logical_job_name, end_us ORDER BY job_id DESC) = 1
),
job_recurring AS (
    SELECT j.job_id, r.runs, r.last_duration_us, r.last_p50_us, r.last_p90_us
    FROM job_info j SEMI JOIN sel_jobs USING (job_id)
    ASOF LEFT JOIN recurring_stream r ON r.logical_job_name = j.logical_job_name AND j.submit_us >= r.t_us
),
-- ---- the rows, one ASOF join per stream --------------------------------------------------
g1 AS (
    SELECT g.*, t.start_us AS last_schedule_us, t.machine_id, t.attempt AS attempts, t.lost_before_us
    FROM grid g ASOF LEFT JOIN task_stream t
      ON t.job_id = g.job_id AND t.task_id = g.task_id AND g.at_us >= t.start_us
),
g2 AS (
    SELECT g.*, s.submitted, s.max_index FROM g1 g ASOF LEFT JOIN job_submits s
      ON s.job_id = g.job_id AND g.at_us >= s.t_us
),
g3 AS (
    SELECT g.*, s.med_delay_us, s.med_cpu, s.med_mem, s.med_disk FROM g2 g ASOF LEFT JOIN job_schedules s
      ON s.job_id = g.job_id AND g.at_us >= s.t_us
),
g4 AS (
    SELECT g.*, f.finished, f.p50_us, f.p75_us FROM g3 g ASOF LEFT JOIN job_finishes f
      ON f.job_id = g.job_id AND g.at_us >= f.t_us
),
g5 AS (
    SELECT g.*, r.running AS job_running FROM g4 g ASOF LEFT JOIN job_running r
      ON r.job_id = g.job_id AND g.at_us >= r.t_us
),
g6 AS (
    SELECT g.*, c.cpus, c.memory, c.platform FROM g5 g ASOF LEFT JOIN capacity c
      ON c.machine_id = g.machine_id AND g.at_us >= c.t_us
),
g7 AS (
    SELECT g.*, m.running AS machine_running, m.cpu_sum, m.mem_sum FROM g6 g ASOF LEFT JOIN machine_load m
      ON m.machine_id = g.machine_id AND g.at_us >= m.t_us
),
g8 AS (
    SELECT g.*, b.bad AS bad_now FROM g7 g ASOF LEFT JOIN machine_bad b
      ON b.machine_id = g.machine_id AND g.at_us >= b.t_us
),
g9 AS (
    -- events strictly after at_us - 1 h are the ones of the last hour
    SELECT g.*, b.bad AS bad_hour_ago FROM g8 g ASOF LEFT JOIN machine_bad b
      ON b.machine_id = g.machine_id AND g.at_us - 3600000000 >= b.t_us
),
g10 AS (
    SELECT g.*, h.ended AS history_n, h.slowness AS history_slowness FROM g9 g ASOF LEFT JOIN machine_history h
      ON h.machine_id = g.machine_id AND g.at_us >= h.t_us
)
SELECT
    '${trace}'                                                       AS trace,
    g.job_id, g.task_id, g.k, g.at_us,
    -- the task
    g.elapsed_us / 1e6                                               AS elapsed,
    coalesce(g.attempts, 1)::DOUBLE                                  AS attempts,
    coalesce(len(list_filter(l.evict_times, x -> x <= g.at_us)), 0)::DOUBLE AS evictions,
    coalesce(len(list_filter(l.fail_times, x -> x <= g.at_us)), 0)::DOUBLE  AS failures,
    coalesce(g.lost_before_us, 0) / 1e6                              AS lost_time,
    (g.at_us - coalesce(g.last_schedule_us, g.first_schedule_us)) / 1e6 AS since_schedule,
    CASE WHEN l.first_submit_us > 0 THEN (l.first_schedule_us - l.first_submit_us) / 1e6 END AS sched_delay,
    CASE WHEN l.first_submit_us > 0
         THEN (l.first_schedule_us - l.first_submit_us) / nullif(g.med_delay_us, 0) END    AS sched_delay_rel,
    g.task_id / (coalesce(g.max_index, g.task_id) + 1.0)             AS index_rank,
    fa.cpu_request / nullif(g.med_cpu, 0)                            AS cpu_request_rel,
    fa.memory_request / nullif(g.med_mem, 0)                         AS memory_request_rel,
    fa.disk_request / nullif(g.med_disk, 0)                          AS disk_request_rel,
    fa.priority::DOUBLE                                              AS priority,
    fa.different_machine::DOUBLE                                     AS different_machine,
    -- its machine
    g.cpus                                                           AS machine_cpus,
    g.memory                                                         AS machine_memory,
    g.platform::DOUBLE                                               AS machine_platform,
    g.machine_running::DOUBLE                                        AS machine_tasks,
    g.cpu_sum / nullif(g.cpus, 0)                                    AS machine_cpu_load,
    g.mem_sum / nullif(g.memory, 0)                                  AS machine_memory_load,
    (coalesce(g.bad_now, 0) - coalesce(g.bad_hour_ago, 0))::DOUBLE   AS machine_bad_events,
    coalesce(g.history_n, 0)::DOUBLE                                 AS machine_history_tasks,
    g.history_slowness                                               AS machine_slowness,
    -- its job
    coalesce(g.finished, 0) / nullif(g.submitted, 0)::DOUBLE         AS job_finished_share,
    g.job_running::DOUBLE                                            AS job_running,
    g.p50_us / 1e6                                                   AS job_p50,
    g.p75_us / 1e6                                                   AS job_p75,
    g.elapsed_us / nullif(g.p50_us, 0)                               AS job_elapsed_rel,
    -- earlier runs of the same logical job name
    coalesce(r.runs, 0)::DOUBLE                                      AS recurring_runs,
    r.last_duration_us / 1e6                                         AS recurring_last_duration,
    r.last_p50_us / 1e6                                              AS recurring_last_p50,
    r.last_p90_us / 1e6                                              AS recurring_last_p90
FROM g10 g
JOIN (SELECT * FROM task_lifecycle WHERE trace = '${trace}' AND ${job_slice}) l
  ON l.job_id = g.job_id AND l.task_id = g.task_id
LEFT JOIN first_attempt fa ON fa.job_id = g.job_id AND fa.task_id = g.task_id
LEFT JOIN job_recurring r ON r.job_id = g.job_id
ORDER BY g.job_id, g.k, g.task_id
