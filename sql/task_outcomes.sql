-- Every task of the selected jobs with the reason it is kept or excluded
-- (docs/PROTOCOL.md section 1): only tasks that FINISH inside the trace window,
-- were first scheduled inside it, and have usage rows get a latency.
-- A trace without task_usage (has_usage = ${has_usage}: a partial mirror) has no
-- usage rows at all: the `no_usage` exclusion then does not apply.
WITH usage_tasks AS (
    SELECT DISTINCT job_id, task_id FROM usage_windows WHERE trace = '${trace}'
)
SELECT
    '${trace}' AS trace,
    l.job_id,
    l.task_id,
    l.first_schedule_us,
    l.final_finish_us,
    l.evictions,
    l.failures,
    CASE WHEN l.end_state = 'finished' AND u.task_id IS NULL AND ${has_usage} THEN 'no_usage'
         ELSE l.end_state END AS outcome
FROM task_lifecycle l
SEMI JOIN jobs j ON j.job_id = l.job_id AND j.trace = '${trace}'
LEFT JOIN usage_tasks u USING (job_id, task_id)
WHERE l.trace = '${trace}'
ORDER BY l.job_id, l.task_id
