-- When each method flagged each task (NULL: never), read from ${predictions} (`predictions` or
-- `operator_predictions`): what the completion-time simulations relaunch or copy.
SELECT trace, method, job_id, task_id, flagged_at_s FROM ${predictions}
