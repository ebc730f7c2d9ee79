-- The operator's decision clock on a Spark trace, on the WALL clock of each job (a stage attempt):
-- microseconds since its origin (operator_tasks__spark.sql: its earliest first launch). Spark
-- launches a stage's tasks in waves, so a decision is a moment of the driver's clock, at which each
-- task has run W - start_us if it has started (a task has ended at W iff start_us + latency_us <= W).
-- The rules are those of sql/operator_checkpoints.sql, counted in wall time; n is the job's
-- operator_tasks (every launched task):
--   k = 0, t0: the ceil(${initial_fraction} * n)-th task to finish has finished (at least the 1st);
--   counted: each time a further ${clock_finished_percent}% of the n tasks have finished;
--   timed: t0 + every ${clock_interval_s} s, the interval doubling after every
--         ${clock_doubling_after} timed decisions (a Spark stage lasts seconds: the format's own
--         interval, stragglers/trace_formats.py, applies unless the setting is given);
-- each kept only while some task runs (started and not ended: known at W) and after t0. Nothing here reads tau,
-- a final latency or the job's end to place a decision; tau_s (the paper's rule on the stage's
-- finished tasks, job_checkpoints) is carried for the scoring only (labels).
WITH seen AS (
    SELECT job_id, task_id, start_us, start_us + latency_us AS end_us, finished,
        count(*) OVER (PARTITION BY job_id) AS n_tasks
    FROM operator_tasks WHERE trace = '${trace}'
),
ranked AS (
    -- the finished tasks in the order they finish on the wall clock
    SELECT job_id, end_us, n_tasks,
        row_number() OVER (PARTITION BY job_id ORDER BY end_us, task_id) AS r
    FROM seen WHERE finished
),
job_clock AS (
    SELECT r.job_id, r.end_us AS t0_us, c.tau_s, r.n_tasks,
        (SELECT count(*) FROM ranked x WHERE x.job_id = r.job_id) AS n_finished
    FROM ranked r
    JOIN job_checkpoints c ON c.trace = '${trace}' AND c.job_id = r.job_id AND c.k = 0
    WHERE r.r = greatest(1, ceil(${initial_fraction} * r.n_tasks))
),
counted AS (
    SELECT r.job_id, r.end_us AS t_us
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
    WHERE d.t_us > c.t0_us
      AND EXISTS (SELECT 1 FROM seen r WHERE r.job_id = d.job_id AND r.start_us <= d.t_us AND r.end_us > d.t_us)
)
SELECT
    '${trace}'                                                          AS trace,
    d.job_id,
    (row_number() OVER (PARTITION BY d.job_id ORDER BY d.t_us) - 1)::INTEGER AS k,
    d.t_us::BIGINT                                                      AS checkpoint_us,
    d.t_us / 1e6                                                        AS checkpoint_s,
    c.t0_us / 1e6                                                       AS t0_s,
    c.tau_s,
    c.n_finished,
    c.n_tasks
FROM decisions d JOIN job_clock c USING (job_id)
ORDER BY d.job_id, k
