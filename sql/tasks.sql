-- Finished tasks of the selected jobs: latency from the FIRST SCHEDULE to
-- the FINAL FINISH (seconds), evictions and failures before it, and the
-- straggler label against the job's ${quantile} latency quantile
-- (quantile_cont = numpy.quantile's linear interpolation).
SELECT
    trace,
    job_id,
    task_id,
    (final_finish_us - first_schedule_us) / 1e6                     AS latency_s,
    final_finish_us - first_schedule_us                             AS latency_us,
    first_schedule_us,
    evictions,
    failures,
    (final_finish_us - first_schedule_us) >=
        quantile_cont(final_finish_us - first_schedule_us, ${quantile})
            OVER (PARTITION BY job_id)                              AS is_straggler
FROM task_outcomes
WHERE trace = '${trace}' AND outcome = 'finished'
ORDER BY job_id, task_id
