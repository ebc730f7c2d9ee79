-- Per job of the paper's view (its finished tasks, the paper's grid): its start (its first task's first
-- SCHEDULE), its end (when its last task ended) and its cutoff (start + t0: when its first checkpoint can
-- be taken at the earliest), trace time in us: which jobs came before which
-- (stragglers/prediction/replay/earlier.py).
SELECT t.job_id, min(t.first_schedule_us) AS start_us,
       max(t.first_schedule_us + t.latency_us) AS end_us,
       min(t.first_schedule_us) + CAST(round(any_value(c.t0_s) * 1e6) AS BIGINT) AS cutoff_us
FROM tasks t JOIN (SELECT job_id, any_value(t0_s) AS t0_s FROM job_checkpoints
                   WHERE trace = '${trace}' GROUP BY job_id) c USING (job_id)
WHERE t.trace = '${trace}' GROUP BY t.job_id ORDER BY t.job_id
