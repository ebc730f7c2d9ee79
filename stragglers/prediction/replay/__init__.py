"""The online replay of one job and what it runs on: the replay itself (simulate), what a protocol does
to a job, the operator's decision clock, the online threshold and its likelihood, the scores of a job's
flags, which jobs came before which, and where replays run (workers, the job store)."""
