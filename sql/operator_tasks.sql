-- Every task of the selected jobs that a scheduler watching them sees run: the operator's replay
-- (stragglers/prediction/replay/clock.py) decides on these, not only on the tasks that will finish
-- (`tasks`, the paper's). A task is in if its first SCHEDULE is inside the trace window and its
-- life is whole in the mirror: it finished, ended otherwise (killed, evicted, failed, lost), or
-- still runs when the trace ends. Left out, as in the funnel: never scheduled, scheduled before
-- the window or outside the mirror, a time inversion, a life across a missing part (its start or
-- its end is unknown).
-- latency_us is how long the task is seen running: to its FINISH, to the event that ended it
-- otherwise, or to the trace's last recorded task end (still running: it may run on after it).
-- Only `finished` tasks have a latency in the paper's sense; the replay reads whether a task
-- ended, and how, only once it has (docs/PROTOCOL_DECISIONS.md, "Every task the scheduler sees").
-- n_known is the job's task count a scheduler knows at the job's origin: its tasks submitted by then
-- (those never scheduled too; tasks submitted later are not known yet). The clock's counted decisions
-- and the budget's base read it, never the count of tasks that will run.
-- start_us is the task's start on its job's wall clock: its first SCHEDULE after the job's earliest
-- first SCHEDULE (the origin of the operator's clock, sql/operator_checkpoints.sql). The origin is
-- not the job's SUBMIT, which may precede it by queueing: a scheduler can copy only tasks that run.
WITH trace_end AS (
    SELECT max(greatest(first_schedule_us, coalesce(final_event_us, 0))) AS end_us
    FROM task_lifecycle
    WHERE trace = '${trace}' AND coalesce(final_event_us, 0) < 9223372036854775807
),
life AS (
    SELECT l.job_id, l.task_id, l.first_schedule_us, l.end_state,
        CASE WHEN l.end_state = 'finished' THEN l.final_finish_us
             WHEN l.end_state IN ('killed', 'evicted', 'failed', 'lost') THEN l.final_event_us
             ELSE greatest((SELECT end_us FROM trace_end), l.first_schedule_us) END AS end_us
    FROM task_lifecycle l
    SEMI JOIN jobs j ON j.job_id = l.job_id AND j.trace = '${trace}'
    WHERE l.trace = '${trace}'
      AND l.end_state IN ('finished', 'killed', 'evicted', 'failed', 'lost', 'still_running', 'finished_after_window')
),
known AS (
    -- a task with no SUBMIT in the window was submitted before it began: known at the origin
    SELECT l.job_id, count(*) AS n_known
    FROM task_lifecycle l
    JOIN (SELECT job_id, min(first_schedule_us) AS origin_us FROM life GROUP BY job_id) o USING (job_id)
    WHERE l.trace = '${trace}' AND coalesce(l.first_submit_us, 0) <= o.origin_us
    GROUP BY l.job_id
)
SELECT
    '${trace}'                                          AS trace,
    job_id,
    task_id,
    first_schedule_us,
    first_schedule_us - min(first_schedule_us) OVER (PARTITION BY job_id) AS start_us,
    end_us - first_schedule_us                          AS latency_us,
    (end_us - first_schedule_us) / 1e6                  AS latency_s,
    end_state = 'finished'                              AS finished,
    CASE WHEN end_state = 'finished_after_window' THEN 'still_running' ELSE end_state END AS end_state,
    k.n_known
FROM life JOIN known k USING (job_id)
ORDER BY job_id, task_id
