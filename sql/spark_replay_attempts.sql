-- The task attempts of the selected stage attempts (stg_spark_stages.selected), as the replay of
-- Spark's speculation reads them (stragglers/prediction/spark_speculation.py): times in milliseconds from
-- the stage attempt's submission (Spark's clock is the driver's, in ms); finish_ms NULL while an
-- attempt runs when the log ends. median_success_ms is the median of the stage attempt's
-- successful attempts' durations (finish - launch, what Spark's MedianHeap holds), which says
-- whether a stage is too short for speculation to matter.
CREATE OR REPLACE TABLE spark_replay_attempts AS
WITH stage AS (
    SELECT s.app_id, s.log_id, s.stage_id, s.stage_attempt, s.tasks, s.submitted_us, s.completed_us
    FROM stg_spark_stages s WHERE s.selected AND s.submitted_us IS NOT NULL
)
SELECT s.app_id, s.log_id, s.stage_id, s.stage_attempt, s.tasks, s.submitted_us,
       (coalesce(s.completed_us, max(t.finish_us) OVER w) - s.submitted_us) / 1000.0 AS stage_ms,
       median(t.finish_us - t.launch_us) FILTER (t.outcome = 'success') OVER w / 1000.0 AS median_success_ms,
       t.task_index, t.attempt, t.speculative, t.outcome, t.executor_id, t.host,
       (t.launch_us - s.submitted_us) / 1000.0 AS launch_ms,
       (t.finish_us - s.submitted_us) / 1000.0 AS finish_ms
FROM stage s JOIN stg_spark_tasks t
  ON t.log_id = s.log_id AND t.stage_id = s.stage_id AND t.stage_attempt = s.stage_attempt
WINDOW w AS (PARTITION BY s.log_id, s.stage_id, s.stage_attempt)
ORDER BY s.submitted_us, s.log_id, s.stage_id, s.stage_attempt, t.launch_us, t.task_index;
