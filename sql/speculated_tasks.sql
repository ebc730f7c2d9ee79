-- The speculative-copy simulation's tasks (the operator's protocol): every task the operator's
-- replay saw (operator_tasks) of a job it evaluated, with when it started and how long it ran. A task that does not
-- finish in the trace has a copy that never finishes either (copy_latency_s = +inf): the copy runs
-- until its original ends and buys nothing (docs/PROTOCOL_DECISIONS.md, "Every task the scheduler
-- sees"); the other copies draw their latencies from the finished tasks (speculation.copy_draws).
SELECT t.trace, t.job_id, t.task_id, t.latency_s,
    t.start_us / 1e6 AS start_s,   -- its start on the job's wall clock, where the flags are (speculation.task_ends)
    CASE WHEN t.finished THEN NULL ELSE 'Infinity'::DOUBLE END AS copy_latency_s
FROM operator_tasks t
SEMI JOIN (SELECT DISTINCT trace, job_id FROM operator_job_metrics) j ON j.trace = t.trace AND j.job_id = t.job_id
