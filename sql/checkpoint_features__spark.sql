-- The features of a Spark trace (docs/TRACES.md, "Spark event logs: the learned methods' chain"):
-- per job (a stage attempt), decision k at wall time W (${checkpoints}: µs since the job's origin)
-- and task (${tasks}: every launched task, with start_us), what the driver knows at W. A task is
-- seen as of its own end if it has ended by W, else as of W: as-of time A = origin +
-- min(W, start_us + latency_us) (a task not launched yet is seen at W, with elapsed 0).
-- Every value reads only events at or before A, never a task's own end metrics (its own success is
-- left out of every summary: the summaries of a finished task are those of the others):
--   elapsed             seconds the task has run (min(W - start, latency), 0 before it starts);
--   failures            its failed attempts that ended by A;
--   locality            its current attempt's locality level, Spark's order (PROCESS_LOCAL 0,
--                       NODE_LOCAL 1, NO_PREF 2, RACK_LOCAL 3, ANY 4);
--   executor_running    attempts (any stage of the application) running on its executor at A;
--   executor_tasks, executor_mean_s, executor_slowness
--                       attempts that succeeded on its executor by A in this application: how many,
--                       their mean duration, their mean slowness (duration / the mean duration of
--                       their own stage's successes by their end: > 1 slower than their stage);
--   host_tasks, host_mean_s, host_slowness    the same on its host (the machine);
--   job_finished_share  the stage attempt's other tasks that succeeded by A / its TaskSet size;
--   job_mean_run_s, job_mean_input_mb, job_mean_shuffle_read_mb
--                       those tasks' mean executor run time, input and shuffle read (Task Metrics);
--   job_elapsed_rel     elapsed / those tasks' mean duration.
-- A value not known yet (no attempt, no success) takes the mean of the job's known values at that
-- decision, else 0; then min-max per (job, decision) over every task, as sql/checkpoint_features.sql.
WITH job AS (
    SELECT j.job_id, j.log_id, j.stage_id, j.stage_attempt, j.n_tasks AS stage_tasks,
        min(t.first_schedule_us) AS origin_us
    FROM jobs j JOIN ${tasks} t ON t.trace = '${trace}' AND t.job_id = j.job_id
    WHERE j.trace = '${trace}'
    GROUP BY ALL
),
grid AS (
    SELECT t.job_id, t.task_id, c.k, c.checkpoint_s, j.log_id, j.stage_id, j.stage_attempt, j.stage_tasks,
        greatest(0, least(c.checkpoint_us - t.start_us, t.latency_us)) / 1e6    AS elapsed,
        j.origin_us + least(c.checkpoint_us, t.start_us + t.latency_us)          AS asof_us,
        t.finished AND t.start_us + t.latency_us <= c.checkpoint_us              AS is_finished
    FROM ${tasks} t
    JOIN job j USING (job_id)
    JOIN ${checkpoints} c ON c.trace = '${trace}' AND c.job_id = t.job_id
    WHERE t.trace = '${trace}'
),
attempts AS (
    SELECT t.* FROM stg_spark_tasks t SEMI JOIN job j ON j.log_id = t.log_id
),
done AS (
    -- every attempt that succeeded in the jobs' applications, with its slowness: its duration over
    -- the mean duration of its stage attempt's successes by its end (itself included: known then).
    -- Integers (µs, ms, bytes, slowness in millionths): their running sums are exact, so a value
    -- at A does not depend on how many rows come after A (floating sums would, in the last bits)
    SELECT log_id, stage_id, stage_attempt, task_index, executor_id, host, finish_us,
        finish_us - launch_us                                                AS duration,
        round(1e6 * (finish_us - launch_us) / nullif(avg(finish_us - launch_us) OVER (
            PARTITION BY log_id, stage_id, stage_attempt ORDER BY finish_us
            RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), 0))::BIGINT  AS slowness,
        coalesce(executor_run_ms, 0)                                         AS run,
        coalesce(input_bytes, 0)                                             AS input,
        coalesce(shuffle_read_bytes, 0)                                      AS shuffle_read
    FROM attempts WHERE outcome = 'success' AND finish_us IS NOT NULL
),
-- running sums at each distinct end time (ties at Spark's millisecond resolution count together)
executor_done AS (
    SELECT log_id, executor_id, finish_us,
        sum(count(*)) OVER w AS n, sum(sum(duration)) OVER w AS duration, sum(sum(slowness)) OVER w AS slowness
    FROM done GROUP BY log_id, executor_id, finish_us
    WINDOW w AS (PARTITION BY log_id, executor_id ORDER BY finish_us ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
host_done AS (
    SELECT log_id, host, finish_us,
        sum(count(*)) OVER w AS n, sum(sum(duration)) OVER w AS duration, sum(sum(slowness)) OVER w AS slowness
    FROM done GROUP BY log_id, host, finish_us
    WINDOW w AS (PARTITION BY log_id, host ORDER BY finish_us ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
stage_done AS (
    SELECT log_id, stage_id, stage_attempt, finish_us,
        sum(count(*)) OVER w AS n, sum(sum(duration)) OVER w AS duration, sum(sum(run)) OVER w AS run,
        sum(sum(input)) OVER w AS input, sum(sum(shuffle_read)) OVER w AS shuffle_read
    FROM done GROUP BY log_id, stage_id, stage_attempt, finish_us
    WINDOW w AS (PARTITION BY log_id, stage_id, stage_attempt ORDER BY finish_us
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
executor_load AS (
    -- attempts running on each executor from at_us on (launches +1, ends -1)
    SELECT log_id, executor_id, at_us,
        sum(sum(delta)) OVER (PARTITION BY log_id, executor_id ORDER BY at_us
                              ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
    FROM (SELECT log_id, executor_id, launch_us AS at_us, 1 AS delta FROM attempts
          UNION ALL
          SELECT log_id, executor_id, finish_us, -1 FROM attempts WHERE finish_us IS NOT NULL)
    GROUP BY log_id, executor_id, at_us
),
own AS (
    -- the task's own attempts (not Spark's copies) as of A: failures, where its current attempt runs
    SELECT g.job_id, g.task_id, g.k,
        count(*) FILTER (WHERE a.outcome = 'failed' AND a.finish_us <= g.asof_us)        AS failures,
        arg_max(a.executor_id, a.attempt) FILTER (WHERE a.launch_us <= g.asof_us)       AS executor_id,
        arg_max(a.host, a.attempt) FILTER (WHERE a.launch_us <= g.asof_us)              AS host,
        arg_max(a.locality, a.attempt) FILTER (WHERE a.launch_us <= g.asof_us)          AS locality
    FROM grid g
    LEFT JOIN attempts a ON a.log_id = g.log_id AND a.stage_id = g.stage_id AND a.stage_attempt = g.stage_attempt
                        AND a.task_index = g.task_id AND NOT a.speculative
    GROUP BY g.job_id, g.task_id, g.k
),
mine AS (
    -- the task's own success by A (any attempt, Spark's copy too), left out of every summary
    SELECT g.job_id, g.task_id, g.k, d.executor_id, d.host, d.duration, d.slowness, d.run, d.input,
        d.shuffle_read
    FROM grid g
    JOIN done d ON d.log_id = g.log_id AND d.stage_id = g.stage_id AND d.stage_attempt = g.stage_attempt
               AND d.task_index = g.task_id AND d.finish_us <= g.asof_us
    QUALIFY row_number() OVER (PARTITION BY g.job_id, g.task_id, g.k ORDER BY d.finish_us) = 1
),
seen AS (
    SELECT g.*, o.failures, o.executor_id, o.host, o.locality
    FROM grid g JOIN own o USING (job_id, task_id, k)
),
joined AS (
    SELECT s.job_id, s.task_id, s.k, s.checkpoint_s, s.is_finished, s.elapsed, s.stage_tasks,
        s.failures, s.locality, l.running AS executor_running,
        coalesce(e.n, 0) - coalesce((m.executor_id = s.executor_id)::INTEGER, 0)       AS executor_tasks,
        coalesce(e.duration, 0) - CASE WHEN m.executor_id = s.executor_id THEN m.duration ELSE 0 END
                                                                                        AS executor_duration,
        coalesce(e.slowness, 0) - CASE WHEN m.executor_id = s.executor_id THEN m.slowness ELSE 0 END
                                                                                        AS executor_slowness_sum,
        coalesce(h.n, 0) - coalesce((m.host = s.host)::INTEGER, 0)                      AS host_tasks,
        coalesce(h.duration, 0) - CASE WHEN m.host = s.host THEN m.duration ELSE 0 END  AS host_duration,
        coalesce(h.slowness, 0) - CASE WHEN m.host = s.host THEN m.slowness ELSE 0 END  AS host_slowness_sum,
        coalesce(st.n, 0) - CASE WHEN m.task_id IS NULL THEN 0 ELSE 1 END               AS stage_n,
        coalesce(st.duration, 0) - coalesce(m.duration, 0)                              AS stage_duration,
        coalesce(st.run, 0) - coalesce(m.run, 0)                                        AS stage_run,
        coalesce(st.input, 0) - coalesce(m.input, 0)                                    AS stage_input,
        coalesce(st.shuffle_read, 0) - coalesce(m.shuffle_read, 0)                      AS stage_shuffle_read
    FROM seen s
    LEFT JOIN mine m USING (job_id, task_id, k)
    ASOF LEFT JOIN executor_done e ON e.log_id = s.log_id AND e.executor_id = s.executor_id AND s.asof_us >= e.finish_us
    ASOF LEFT JOIN host_done h ON h.log_id = s.log_id AND h.host = s.host AND s.asof_us >= h.finish_us
    ASOF LEFT JOIN stage_done st ON st.log_id = s.log_id AND st.stage_id = s.stage_id
                                AND st.stage_attempt = s.stage_attempt AND s.asof_us >= st.finish_us
    ASOF LEFT JOIN executor_load l ON l.log_id = s.log_id AND l.executor_id = s.executor_id AND s.asof_us >= l.at_us
),
raw AS (
    SELECT job_id, task_id, k, checkpoint_s, is_finished,
        elapsed,
        failures::DOUBLE                                                            AS failures,
        CASE locality WHEN 'PROCESS_LOCAL' THEN 0 WHEN 'NODE_LOCAL' THEN 1 WHEN 'NO_PREF' THEN 2
                      WHEN 'RACK_LOCAL' THEN 3 WHEN 'ANY' THEN 4 END::DOUBLE        AS locality,
        executor_running::DOUBLE                                                    AS executor_running,
        executor_tasks::DOUBLE                                                      AS executor_tasks,
        executor_duration / 1e6 / nullif(executor_tasks, 0)                         AS executor_mean_s,
        executor_slowness_sum / 1e6 / nullif(executor_tasks, 0)                     AS executor_slowness,
        host_tasks::DOUBLE                                                          AS host_tasks,
        host_duration / 1e6 / nullif(host_tasks, 0)                                 AS host_mean_s,
        host_slowness_sum / 1e6 / nullif(host_tasks, 0)                             AS host_slowness,
        stage_n / stage_tasks                                                       AS job_finished_share,
        stage_run / 1e3 / nullif(stage_n, 0)                                        AS job_mean_run_s,
        stage_input / 1e6 / nullif(stage_n, 0)                                      AS job_mean_input_mb,
        stage_shuffle_read / 1e6 / nullif(stage_n, 0)                               AS job_mean_shuffle_read_mb,
        elapsed / nullif(stage_duration / 1e6 / nullif(stage_n, 0), 0)              AS job_elapsed_rel
    FROM joined
),
imputed AS (
    -- the mean's rows in task order, so that a parallel build adds them in the same order every time
    SELECT job_id, task_id, k, checkpoint_s, is_finished,
        coalesce(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished)),
                 avg(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished)))
                    OVER (PARTITION BY job_id, k ORDER BY task_id
                          ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
                 0)
    FROM raw
),
normalized AS (
    SELECT job_id, task_id, k, checkpoint_s, is_finished,
        coalesce((COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished))
                  - min(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished))) OVER (PARTITION BY job_id, k))
                 / nullif(max(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished))) OVER (PARTITION BY job_id, k)
                          - min(COLUMNS(* EXCLUDE (job_id, task_id, k, checkpoint_s, is_finished))) OVER (PARTITION BY job_id, k), 0),
                 0)
    FROM imputed
)
SELECT '${trace}' AS trace, job_id, task_id, k, checkpoint_s, is_finished,
    elapsed, failures, locality, executor_running, executor_tasks, executor_mean_s, executor_slowness,
    host_tasks, host_mean_s, host_slowness, job_finished_share, job_mean_run_s, job_mean_input_mb,
    job_mean_shuffle_read_mb, job_elapsed_rel
FROM normalized
ORDER BY job_id, k, task_id
