"""The operator's decision clock: when a scheduler that knows only the past decides.

Under ``threshold="online"`` (the operator's protocol) with ``decision_clock="online"`` (the
default) the replay decides at the times of ``operator_checkpoints`` (sql/operator_checkpoints.sql,
built with the features by the warehouse), on features as of each of those times
(``operator_checkpoint_features``: the paper's own SQL on that grid), until the job's last task
ends, for every task the scheduler sees run (``operator_tasks``: the tasks that will be killed,
evicted, failed or lost too, not only those that finish; the job's task count n is theirs, known at
submission). Every decision time is a function of what has happened by then, on the paper's common
task-time clock: t0 (a share of the tasks has finished), each time a further
``clock_finished_percent`` of the job's tasks have finished, and every ``clock_interval_s`` while
tasks run, that interval doubling after every ``clock_doubling_after`` timed decisions. No decision
time reads tau, a final latency or the job's end (tests/test_future_cannot_change_past.py rewrites
a job's future and asserts every earlier decision is bit-identical).

``decision_clock="legacy_grid"`` switches the paper's grid on instead, whose
step is cut from the true tau, then steps to the job's end spaced by its last latency, on features
repeated from the last row before tau (``protocol.adapt_job``). It reads the future; it is kept to
measure what that did (docs/EVALUATION.md) and to show that the test above catches it.

The paper's protocols (``threshold="oracle"``) keep the paper's grid (``job_checkpoints``).
"""

from __future__ import annotations

from stragglers.settings.prediction import EvaluationSettings
from stragglers.settings.warehouse import WarehouseSettings

#: (decision times, features) the replay reads: the paper's grid, the operator's clock
PAPER_TABLES = ("job_checkpoints", "checkpoint_features")
ONLINE_TABLES = ("operator_checkpoints", "operator_checkpoint_features")
#: the tasks each grid's tables are built on: the paper's finished tasks (`tasks`), or every task the
#: scheduler sees run (`operator_tasks`: those that will be killed, evicted, failed or lost too)
TASKS_OF = {**{t: "tasks" for t in PAPER_TABLES}, **{t: "operator_tasks" for t in ONLINE_TABLES}}


def uses_online_clock(s: EvaluationSettings) -> bool:
    """True when the replay decides on the operator's online clock."""
    return s.threshold == "online" and s.decision_clock == "online"


def grid_tables(s: EvaluationSettings) -> tuple[str, str]:
    """(the decision-time table, the feature table) the evaluation under ``s`` reads."""
    return ONLINE_TABLES if uses_online_clock(s) else PAPER_TABLES


def next_timed_decision(t0: float, t: float, interval_s: int, doubling_after: int) -> float:
    """The first timed decision of the online clock after time t (s): the offsets from t0 are those of
    sql/operator_checkpoints.sql (interval I for the first B = ``doubling_after`` ticks, 2I for the
    next B, ...: block b starts at B I (2^b - 1)), in whole microseconds as there (a decision at a
    tick is at the tick, not a float's width before it). Known at t: it depends on t0 and t only."""
    t0_us, t_us, gap0 = round(t0 * 1e6), round(t * 1e6), int(interval_s) * 1_000_000
    if t_us < t0_us:
        return (t0_us + gap0) / 1e6
    since, b = t_us - t0_us, 0
    while doubling_after * gap0 * (2 ** (b + 1) - 1) <= since:
        b += 1
    start, gap = doubling_after * gap0 * (2 ** b - 1), gap0 * 2 ** b
    return (t0_us + start + ((since - start) // gap + 1) * gap) / 1e6


def clock_caption(finished_percent: int | None = None, interval_s: int | None = None,
                  doubling_after: int | None = None) -> str:
    """The online clock in words for the report (the settings' defaults where not given)."""
    def value(name, given):
        return WarehouseSettings.model_fields[name].default if given is None else given

    pct, every, double = (value("clock_finished_percent", finished_percent), value("clock_interval_s", interval_s),
                          value("clock_doubling_after", doubling_after))
    return (f"decisions on an online clock: each time a further {pct}% of the job's tasks have finished and "
            f"every {every} s while tasks run (the interval doubling after every {double}), until the last "
            f"task ends; the threshold and the features as known at each decision; the replay sees every task "
            f"of the job, those that will be killed, evicted, failed or lost too (a copy of one buys nothing)")
