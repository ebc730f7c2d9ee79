-- The decision times after the first (k > 0) of every job, read from ${grid} (`job_checkpoints`,
-- or the operator's clock `operator_checkpoints`): when a waiting relaunch or copy may start.
SELECT trace, job_id, checkpoint_s FROM ${grid} WHERE k > 0
