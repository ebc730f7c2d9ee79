-- The operator's decision clock (docs/PROTOCOL.md, "The operator's clock"; the switch and the
-- replay's side are in stragglers/prediction/replay/clock.py): when a scheduler that knows only the past
-- decides, per selected job, on the job's wall clock: microseconds since its origin, the earliest
-- first SCHEDULE of its tasks. A task starts at start = ${task_start} on that clock (its first
-- SCHEDULE after the origin: sql/operator_tasks.sql) and ends at start + latency_us; at W it has
-- ended iff start + latency_us <= W, it runs iff it has started and not ended, and it has run
-- W - start. A decision at W reads the trace up to origin + W and a copy it launches starts then.
-- (decision_clock='task_clock' renders this file with every start at 0: the paper's common
-- task-time clock, where a decision at t reads each task as of its own start + t.)
-- It reads `operator_tasks`: every task the scheduler sees run, not only those that will finish.
-- n, the job's task count, is operator_tasks.n_known: the tasks submitted by the job's origin,
-- whatever the tasks do later and whichever are submitted after. Every decision time is a function of what has happened by then:
--   k = 0, t0: the ceil(${initial_fraction} * n)-th task to finish has finished (at least the 1st);
--   counted: each time a further ${clock_finished_percent}% of the n tasks have finished, i.e. when
--         the ceil(j * ${clock_finished_percent} * n / 100)-th finished task finishes
--         (integer arithmetic: exact), j = 1, 2, ... (a count that is never reached places nothing);
--   timed: t0 + every ${clock_interval_s} s, the interval doubling after every
--         ${clock_doubling_after} timed decisions (a long tail gets a number of decisions
--         logarithmic in its length; a fixed cap would need the job's end to place them);
-- each kept only while some task runs (started and not ended: known at W) and after t0.
-- Nothing here reads tau, a final latency or the job's end to place a decision; tau_s (the
-- paper's, over the finished tasks) is carried for the scoring only (labels).
WITH seen AS (
    SELECT job_id, task_id, finished, ${task_start} AS start_us, ${task_start} + latency_us AS end_us,
        n_known AS n_tasks
    FROM operator_tasks WHERE trace = '${trace}'
),
ranked AS (
    -- the finished tasks in the order they finish on the clock
    SELECT job_id, end_us, n_tasks,
        row_number() OVER (PARTITION BY job_id ORDER BY end_us, task_id) AS r
    FROM seen WHERE finished
),
job_clock AS (
    -- t0 from the task count at submission; tau (labels only) from the paper's clock
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
    -- while some task runs at W (what the scheduler sees at W: a task started and not ended yet)
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
