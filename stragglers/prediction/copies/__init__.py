"""What relaunched stragglers and speculative copies do to a job's completion time: the paper's
relaunches (Algorithms 2-3), the completion and speculation tables over many jobs, a trace's own
re-executions, and the copies the engine's Spark rule makes on a Spark log. The draws they all share
are the engine's (stragglers/prediction/engine/draws.py)."""
