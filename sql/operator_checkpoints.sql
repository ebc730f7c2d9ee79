-- The operator's decision clock (docs/PROTOCOL.md, "The operator's clock"; the switch and the
-- replay's side are in stragglers/prediction/clock.py): when a scheduler that knows only the past
-- decides, per selected job, on the paper's common task-time clock (seconds since each task's own
-- first SCHEDULE; at time t the tasks with latency <= t have finished, the others have run t).
-- Every decision time is a function of what has happened by then:
--   k = 0, t0: the ceil(${initial_fraction} * n)-th task has finished (at least the 1st): read
--         from job_checkpoints (n, the job's task count, is known at submission);
--   counted: each time a further ${clock_finished_percent}% of the n tasks have finished, i.e. at
--         the latency of the ceil(j * ${clock_finished_percent} * n / 100)-th fastest task
--         (integer arithmetic: exact), j = 1, 2, ...;
--   timed: t0 + every ${clock_interval_s} s, the interval doubling after every
--         ${clock_doubling_after} timed decisions (a long tail gets a number of decisions
--         logarithmic in its length; a fixed cap would need the job's end to place them);
-- each kept only while some task still runs (latency > t: known at t) and after t0.
-- Nothing here reads tau, a final latency or the job's end to place a decision; tau_s is
-- carried for the scoring only (labels), as in job_checkpoints.
WITH ranked AS (
    SELECT job_id, latency_us,
        row_number() OVER (PARTITION BY job_id ORDER BY latency_us, task_id) AS r
    FROM tasks WHERE trace = '${trace}'
),
job_clock AS (
    -- t0, tau and the task count as the paper's clock has them (job_checkpoints' k = 0 row)
    SELECT job_id, checkpoint_us AS t0_us, tau_s, n_finished AS n_tasks
    FROM job_checkpoints WHERE trace = '${trace}' AND k = 0
),
counted AS (
    SELECT r.job_id, r.latency_us AS t_us
    FROM (SELECT c.job_id, (g.j * ${clock_finished_percent} * c.n_tasks + 99) // 100 AS r
          FROM job_clock c, generate_series(1, 100 // ${clock_finished_percent}) AS g(j)) want
    JOIN ranked r ON r.job_id = want.job_id AND r.r = want.r
),
timed AS (
    -- tick i (1-based) in block b = (i - 1) // B, position p = (i - 1) % B + 1:
    -- offset = interval * (B * (2^b - 1) + p * 2^b); 25 blocks reach 2^25 intervals
    SELECT c.job_id,
        c.t0_us + ${clock_interval_s}::BIGINT * 1000000
                  * (${clock_doubling_after} * ((1::BIGINT << ((g.i - 1) // ${clock_doubling_after})) - 1)
                     + ((g.i - 1) % ${clock_doubling_after} + 1) * (1::BIGINT << ((g.i - 1) // ${clock_doubling_after})))
            AS t_us
    FROM job_clock c, generate_series(1, 25 * ${clock_doubling_after}) AS g(i)
),
decisions AS (
    SELECT job_id, t0_us AS t_us FROM job_clock
    UNION
    SELECT d.job_id, d.t_us
    FROM (SELECT * FROM counted UNION ALL SELECT * FROM timed) d
    JOIN job_clock c USING (job_id)
    -- while some task still runs at t (what the scheduler sees at t: a task not finished yet)
    WHERE d.t_us > c.t0_us
      AND EXISTS (SELECT 1 FROM ranked r WHERE r.job_id = d.job_id AND r.latency_us > d.t_us)
)
SELECT
    '${trace}'                                                          AS trace,
    d.job_id,
    (row_number() OVER (PARTITION BY d.job_id ORDER BY d.t_us) - 1)::INTEGER AS k,
    d.t_us::BIGINT                                                      AS checkpoint_us,
    d.t_us / 1e6                                                        AS checkpoint_s,
    c.t0_us / 1e6                                                       AS t0_s,
    c.tau_s,
    c.n_tasks                                                           AS n_finished
FROM decisions d JOIN job_clock c USING (job_id)
ORDER BY d.job_id, k
