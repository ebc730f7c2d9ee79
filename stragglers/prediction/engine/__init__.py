"""The one replay engine: every policy (each learned method's cuts, the free rules, Spark's rule,
Hadoop's caps, the oracle) on every job of every trace, at the job's checks, under one cap and one
copy model, with copies placed where the trace says they can run.

- ``job``: a job as the engine sees it (``CopyJob``) and what a scheduler knows at each check;
- ``caps``: a budget of extra machine time, Hadoop's caps, or none;
- ``policies``: what ranks the running tasks at each check (``Policy``);
- ``spark_rule``: Spark's speculation rule, written once;
- ``replay``: running policies through the engine (``outcomes``, ``replay_all``, ``copy_log``);
- ``kernel``: the compiled event loop;
- ``draws``: the copy model, one draw of every relaunch's or copy's latency per seed.
"""
