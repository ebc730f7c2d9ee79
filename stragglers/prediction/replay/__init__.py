"""The online replay of one job and what it runs on: the replay itself (simulate), what a protocol does
to a job, the operator's decision clock, the scores of a job's flags, which jobs came before which, and
where replays run (workers, the job store). The online threshold it reads is in ../statistics."""
