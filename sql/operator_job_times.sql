-- Per job of the operator's view (every task the scheduler saw run, the operator's clock): its start
-- (its first task's first SCHEDULE), its end (when its last task ended in any way; none when a task
-- still runs when the trace ends: such a job never came before another) and its cutoff (start + t0 of
-- the operator's clock), trace time in us: which jobs came before which (stragglers/prediction/replay/earlier.py).
SELECT t.job_id, min(t.first_schedule_us) AS start_us,
       CASE WHEN bool_and(t.end_state <> 'still_running')
            THEN max(t.first_schedule_us + t.latency_us) END AS end_us,
       min(t.first_schedule_us) + CAST(round(any_value(c.t0_s) * 1e6) AS BIGINT) AS cutoff_us
FROM operator_tasks t JOIN (SELECT job_id, any_value(t0_s) AS t0_s FROM operator_checkpoints
                            WHERE trace = '${trace}' GROUP BY job_id) c USING (job_id)
WHERE t.trace = '${trace}' GROUP BY t.job_id ORDER BY t.job_id
