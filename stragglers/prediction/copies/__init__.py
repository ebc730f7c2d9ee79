"""What relaunched stragglers and speculative copies do to a job's completion time: the relaunch and
copy models, the completion and speculation tables over many jobs, a trace's own re-executions, and
the copies the engine's Spark rule makes on a Spark log."""
