-- One row per stage attempt (a TaskSet, what Spark's speculation acts on) of the kept logs:
-- SparkListenerStageSubmitted / StageCompleted's "Stage Info". ``tasks`` is the TaskSet's size
-- ("Number of Tasks": for a retried stage, only the partitions it recomputes). ``cut``: the attempt
-- has no StageCompleted and the log stops before its application ends (truncated, or in progress):
-- it was still running when the log stops, its end and its last tasks never written, so it is never
-- selected (its rows stay; spark_log_account counts it as left out). In a complete log no attempt is
-- cut. ``selected`` is tasks >= min_tasks and not cut (a job of this project). Times in microseconds
-- since the epoch.
CREATE OR REPLACE TABLE stg_spark_stages AS
WITH info AS (
    SELECT e.log_id, e.j.Event = 'SparkListenerStageCompleted' AS completed, e.j."Stage Info" AS i
    FROM spark_stage_events e JOIN stg_spark_applications a ON a.log_id = e.log_id AND a.kept
), per_attempt AS (
    SELECT log_id, i."Stage ID" AS stage_id, i."Stage Attempt ID" AS stage_attempt,
           any_value(i."Stage Name") AS stage_name,
           max(i."Number of Tasks") AS tasks,
           min(i."Submission Time") * 1000 AS submitted_us,
           max(i."Completion Time") * 1000 AS completed_us,
           any_value(i."Failure Reason") FILTER (completed) AS failure_reason,
           bool_or(completed) AS completed
    FROM info GROUP BY ALL
)
SELECT a.app_id, p.*,
       p.tasks >= ${min_tasks} AND (p.completed OR a.complete) AS selected,
       NOT p.completed AND NOT a.complete AS cut
FROM per_attempt p JOIN stg_spark_applications a USING (log_id)
ORDER BY p.log_id, p.stage_id, p.stage_attempt;
