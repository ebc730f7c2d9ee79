"""hound_with_nodes (stragglers/diagnosis/machine_evidence.py) on hand-made rows with known answers:
a straggler counts as on a slow machine when the other jobs' tasks there (>= node_min_tasks) have a mean
z above 0 by a one-sided t-test at 0.05 (Ouyang et al. Eq. 1; docs/HOUND.md, "node evidence for limited processor")."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from assets.diagnosis import _node_answers
from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.machine_evidence import (METHOD, hound_with_nodes, machine_z, node_shares,
                                                   slow_machines, with_nodes)
from stragglers.diagnosis.truth import validate
from stragglers.settings.nodes import NodeSettings
from stragglers.traces.synth.model import LIMITED_PROCESSOR

LP_JOB, OTHER, SELF_JOB, FEW_JOB = 1, 2, 3, 4
N = 30   # tasks per diagnosed job: latencies 1..30 s, p90 = 27.1 s, so tasks 27, 28, 29 are the stragglers
STRAGGLERS = (27, 28, 29)


def _around(z: float, n: int) -> list[float]:
    """n values with mean z and a small spread (z - 0.1, z, z + 0.1, ...)."""
    return [z + 0.1 * (i % 3 - 1) for i in range(n)]


def _rows(few_tasks: int = 9) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(hound_inputs rows, node_task_durations rows)."""
    inputs = pd.DataFrame([{"job_id": j, "task_id": t, "latency_s": float(t + 1)}
                           for j in (LP_JOB, SELF_JOB, FEW_JOB) for t in range(N)])
    d = []

    def add(job, task, machine, z):
        d.append({"job_id": job, "task_id": task, "machine_id": machine, "z": z})

    # LP_JOB: two of its three stragglers on "slow", whose 12 tasks of another job have mean z 1.0;
    # the third on "typical", whose 12 tasks of another job have mean z -0.5
    for t in range(N):
        add(LP_JOB, t, "slow" if t in (27, 28) else "typical" if t == 29 else f"lp-{t}", 0.0)
    for i, z in enumerate(_around(1.0, 12)):
        add(OTHER, i, "slow", z)
    for i, z in enumerate(_around(-0.5, 12)):
        add(OTHER, 100 + i, "typical", z)
    # SELF_JOB: its stragglers on "own", slow through the job's own 18 tasks only (z 1.5); the 12 tasks of
    # another job there have mean z 0
    for t in range(N):
        own = t < 15 or t in STRAGGLERS
        add(SELF_JOB, t, "own" if own else f"self-{t}", 1.5 if own else -1.0)
    for i, z in enumerate([0.3, -0.3] * 6):
        add(OTHER, 200 + i, "own", z)
    # FEW_JOB: its stragglers on "few", where another job has only ``few_tasks`` tasks, all clearly slow (z 2)
    for t in range(N):
        add(FEW_JOB, t, "few" if t in STRAGGLERS else f"few-{t}", 0.0)
    for i, z in enumerate(_around(2.0, few_tasks)):
        add(OTHER, 300 + i, "few", z)
    return inputs, pd.DataFrame(d)


HOUND = pd.DataFrame({"job_id": [LP_JOB, LP_JOB, SELF_JOB, FEW_JOB],
                      "cause": ["data_skew", "cache_misses", "data_skew", "data_skew"],
                      "weight": [0.7, 0.3, 1.0, 1.0]})
JOBS = [LP_JOB, SELF_JOB, FEW_JOB]


def test_the_default_is_the_node_rankings():
    assert HoundSettings().node_min_tasks == NodeSettings().min_tasks_per_node == 10


def test_a_machine_slow_through_other_jobs_carries_the_job_to_limited_processor():
    inputs, durations = _rows()
    answer, shares = hound_with_nodes(HOUND, inputs, durations, JOBS, HoundSettings())
    assert shares.loc[LP_JOB].to_dict() == {"stragglers": 3, "known": 3, "on_slow": 2, "node_share": 2 / 3}
    mix = answer.groupby("job_id").apply(lambda g: dict(zip(g.cause, g.weight)), include_groups=False)
    assert mix[LP_JOB] == {LIMITED_PROCESSOR: 1.0}                  # 2 of 3 stragglers: > 1/2
    assert mix[SELF_JOB] == mix[FEW_JOB] == {"data_skew": 1.0}      # Hound's mixture kept


def test_the_jobs_own_tasks_do_not_make_its_machine_slow():
    inputs, durations = _rows()
    # with the job's own tasks the machine would be judged slow ...
    assert slow_machines(machine_z(durations), 10)["own"]
    # ... without them (leave one job out) it is not, and the job's node share is 0
    assert not slow_machines(machine_z(durations[durations.job_id != SELF_JOB]), 10)["own"]
    shares = node_shares(inputs, durations, 10)
    assert shares.loc[SELF_JOB, "on_slow"] == 0 and shares.loc[SELF_JOB, "node_share"] == 0.0


def test_a_machine_with_fewer_than_min_tasks_of_other_jobs_is_not_judged():
    inputs, durations = _rows(few_tasks=9)
    assert "few" not in slow_machines(machine_z(durations[durations.job_id != FEW_JOB]), 10).index
    assert node_shares(inputs, durations, 10).loc[FEW_JOB, "node_share"] == 0.0
    # the tenth task makes it judged, and slow
    inputs, durations = _rows(few_tasks=10)
    assert node_shares(inputs, durations, 10).loc[FEW_JOB, "node_share"] == 1.0


def test_with_nodes_keeps_hound_below_the_majority():
    share = pd.Series({LP_JOB: 0.5, SELF_JOB: 0.51})
    answer = with_nodes(HOUND, share, JOBS)
    assert set(answer[answer.job_id == LP_JOB].cause) == {"data_skew", "cache_misses"}   # exactly 1/2: Hound
    assert answer[answer.job_id == SELF_JOB].cause.tolist() == [LIMITED_PROCESSOR]


def test_validate_scores_the_extra_answer_beside_hound_and_keeps_hounds_rows():
    inputs, durations = _rows()
    answer, _ = hound_with_nodes(HOUND, inputs, durations, JOBS, HoundSettings())
    truth_jobs = pd.DataFrame({"job_id": JOBS, "causes": ["limited_processor:1.00", "data_skew:1.00", "data_skew:1.00"],
                               "causes_effective": ["limited_processor:1.00", "data_skew:1.00", "data_skew:1.00"]})
    stragglers = {LP_JOB: {LIMITED_PROCESSOR: 0.67}, SELF_JOB: {"data_skew": 1.0}, FEW_JOB: {"data_skew": 1.0}}
    per_job, summary = validate(HOUND, truth_jobs, JOBS, stragglers)
    per_job2, summary2 = validate(HOUND, truth_jobs, JOBS, stragglers, {METHOD: answer})
    pd.testing.assert_frame_equal(per_job, per_job2)
    pd.testing.assert_frame_equal(summary, summary2[summary2.method != METHOD].reset_index(drop=True))
    acc = summary2.set_index(["truth", "method"]).dominant_accuracy
    for truth in ("planted", "effective", "stragglers"):
        assert acc[(truth, "hound")] == pytest.approx(2 / 3)
        assert acc[(truth, METHOD)] == 1.0
    assert list(summary2[summary2.truth == "stragglers"].method) == [
        "hound", METHOD, "always_data_skew", "best_constant_in_hindsight"]


def test_the_asset_scores_without_node_rows_and_says_so():
    inputs, durations = _rows()
    with duckdb.connect() as con:
        answers, meta = _node_answers(con, "synthetic", HOUND, JOBS, HoundSettings())
        assert answers == {} and "does not exist" in meta["node_evidence"]
        con.register("d", durations.assign(trace="other"))
        con.execute("CREATE TABLE node_task_durations AS SELECT * FROM d")
        con.register("i", inputs.assign(trace="synthetic"))
        con.execute("CREATE TABLE hound_inputs AS SELECT * FROM i")
        answers, meta = _node_answers(con, "synthetic", HOUND, JOBS, HoundSettings())
        assert answers == {} and "no rows for synthetic" in meta["node_evidence"]
        con.execute("UPDATE node_task_durations SET trace = 'synthetic'")
        answers, meta = _node_answers(con, "synthetic", HOUND, JOBS, HoundSettings())
    assert list(answers) == [METHOD] and meta[f"{METHOD}_jobs_limited_processor"] == 1
