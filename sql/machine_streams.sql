-- The machine streams of event_features.sql: per machine, running aggregates ordered by the
-- time each value became known (docs/EVENT_FEATURES.md), one row per (machine, stream, time).
-- event_features.sql takes a row's value from each stream's last entry at or before its as-of
-- time (an ASOF join), so no value is read before it happened. Built once for every job's
-- attempts (a machine's load counts every job on it), apart from event_features so that it
-- can run per slice of job ids without recomputing these streams for each slice.
--
--   load     running (attempts on the machine), cpu_sum and mem_sum (their requests)
--   bad      EVICT, FAIL and LOST endings on the machine so far
--   history  ended: finished first lives of ended jobs that finished on it, from their
--            job's end; slowness: the median of their latency over their job's median latency
--
-- State per machine: runs per range of machine ids (${machine_slice}), in machine order.
-- Inputs: task_attempts, task_lifecycle, job_runs.
WITH attempts AS (
    SELECT job_id, task_id, attempt, start_us, machine_id,
        CASE WHEN end_us < 9223372036854775807 THEN end_us END AS end_us, end_event,
        cpu_request, memory_request
    FROM task_attempts WHERE trace = '${trace}' AND machine_id IS NOT NULL
      AND ${machine_slice}   -- a range of machine ids (bounded memory: build.py machine_slices)
),
machine_deltas AS (
    -- every attempt of every job: +1 and its requests at its start, -1 at its end. Requests in
    -- integer units of 1e-9 so that running sums are exact (the same bits whatever the order)
    SELECT machine_id, start_us AS t_us, 1 AS d,
        round(coalesce(cpu_request, 0) * 1e9)::BIGINT AS cpu, round(coalesce(memory_request, 0) * 1e9)::BIGINT AS mem
    FROM attempts
    UNION ALL
    SELECT machine_id, end_us, -1, -round(coalesce(cpu_request, 0) * 1e9)::BIGINT,
        -round(coalesce(memory_request, 0) * 1e9)::BIGINT
    FROM attempts WHERE end_us IS NOT NULL
),
machine_load AS (
    -- one row per (machine, time): the deltas of a time are summed first, so ties have one value
    SELECT machine_id, t_us,
        sum(sum(d)) OVER w AS running, sum(sum(cpu)) OVER w / 1e9 AS cpu_sum, sum(sum(mem)) OVER w / 1e9 AS mem_sum
    FROM machine_deltas GROUP BY machine_id, t_us
    WINDOW w AS (PARTITION BY machine_id ORDER BY t_us ROWS UNBOUNDED PRECEDING)
),
machine_bad AS (
    SELECT machine_id, end_us AS t_us,
        row_number() OVER (PARTITION BY machine_id ORDER BY end_us, job_id, task_id, attempt) AS bad
    FROM attempts WHERE end_event IN (2, 3, 6) AND end_us IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY machine_id, end_us ORDER BY job_id DESC, task_id DESC, attempt DESC) = 1
),
machine_history AS (
    SELECT m.machine_id, e.end_us AS t_us,
        count(*) OVER w AS ended,
        median((l.final_finish_us - l.first_schedule_us) / nullif(e.p50_us, 0)) OVER w AS slowness
    FROM task_lifecycle l
    JOIN attempts m ON m.job_id = l.job_id AND m.task_id = l.task_id AND m.end_event = 4
                   AND m.end_us = l.final_finish_us
    JOIN job_runs e ON e.trace = '${trace}' AND e.job_id = l.job_id AND e.p50_us IS NOT NULL
    WHERE l.trace = '${trace}' AND l.end_state = 'finished' AND l.first_schedule_us > 0
      AND l.final_finish_us <= e.end_us
    WINDOW w AS (PARTITION BY m.machine_id ORDER BY e.end_us, l.job_id, l.task_id ROWS UNBOUNDED PRECEDING)
    QUALIFY row_number() OVER (PARTITION BY m.machine_id, e.end_us ORDER BY l.job_id DESC, l.task_id DESC) = 1
)
SELECT '${trace}' AS trace, machine_id, 'load' AS stream, t_us, running, cpu_sum, mem_sum,
    NULL::BIGINT AS bad, NULL::BIGINT AS ended, NULL::DOUBLE AS slowness
FROM machine_load
UNION ALL
SELECT '${trace}', machine_id, 'bad', t_us, NULL, NULL, NULL, bad, NULL, NULL FROM machine_bad
UNION ALL
SELECT '${trace}', machine_id, 'history', t_us, NULL, NULL, NULL, NULL, ended, slowness FROM machine_history
ORDER BY machine_id, stream, t_us
