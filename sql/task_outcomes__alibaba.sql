-- Every instance of the selected Alibaba tasks, kept or excluded by reason.
-- Times are seconds in the trace, microseconds here (as for Google).
SELECT
    '${trace}'                  AS trace,
    i.job_id,
    i.task_id,
    i.start_time * 1000000      AS first_schedule_us,
    i.end_time * 1000000        AS final_finish_us,
    0::BIGINT                   AS evictions,
    0::BIGINT                   AS failures,
    i.end_state                 AS outcome
FROM alibaba_instances i
SEMI JOIN jobs j ON j.job_id = i.job_id AND j.trace = '${trace}'
ORDER BY i.job_id, i.task_id
