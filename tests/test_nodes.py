"""Node ranking (Ouyang et al., SCC 2016) on hand-made cases with answers worked by hand."""

from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from stragglers.nodes.build import build_attempts
from stragglers.nodes.fitting import anderson_darling, rank_candidates
from stragglers.nodes.ranking import node_indicators, pcores_levels
from stragglers.settings.nodes import NodeSettings
from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_jobs
from stragglers.warehouse.runner import build_table
from stragglers.warehouse.staging import stage_google
from tests.minitrace import FAIL, FINISH, S, SCHEDULE, SUBMIT, T0, MiniTrace

JOB, SMALL = 6_100_000_001, 6_100_000_002
A, B, C = 1001, 1002, 1003   # machines


def test_pcores_levels_on_a_toy_graph():
    # intervals:   n0 [0, 1]   n1 [2, 3]   n2 [2.5, 4]   n3 [5, 6]   n4 [0.5, 2.2]
    # edges i -> j when lo_j > hi_i:
    #   n0 -> n1, n2, n3 ; n4 -> n2, n3 ; n1 -> n3 ; n2 -> n3 ; n3 -> none
    # round 0 removes n3 (no outgoing edge); then n1 and n2 have none -> level 1;
    # then n0 -> n1/n2 are gone, n4 -> none: n0 and n4 -> level 2.
    lo = np.array([0, 2, 2.5, 5, 0.5])
    hi = np.array([1, 3, 4, 6, 2.2])
    assert pcores_levels(lo, hi).tolist() == [2, 1, 1, 0, 2]
    # identical intervals: no edges, everyone is level 0
    assert pcores_levels(np.zeros(3), np.ones(3)).tolist() == [0, 0, 0]
    with pytest.raises(ValueError):
        pcores_levels(np.array([1.0]), np.array([0.0]))


def test_anderson_darling_matches_scipy_for_the_normal():
    x = np.random.default_rng(3).normal(2.0, 1.5, size=200)
    ours = anderson_darling(x, stats.norm(x.mean(), x.std(ddof=1)).cdf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)   # scipy 1.17 asks for a p-value method
        ref = stats.anderson(x, "norm").statistic
    assert ours == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("name, dist", [
    ("3-parameter log-logistic", stats.fisk(c=6.0, loc=-3.0, scale=3.0)),
    ("3-parameter lognormal", stats.lognorm(s=0.5, loc=-2.0, scale=2.0)),
])
def test_ad_ranking_picks_the_generating_distribution(name, dist):
    # families that do not nest each other (a 3-parameter Weibull nests the extreme values in
    # the limit, a 3-parameter gamma the normal): the generating one wins by a wide margin
    x = dist.rvs(size=4000, random_state=np.random.default_rng(11))
    ranked = rank_candidates(x)
    assert ranked[0][0] == name
    assert np.isnan(dict((r[0], r[1]) for r in ranked)["log-logistic"])   # needs positive data


def _trace() -> MiniTrace:
    m = MiniTrace()
    m.job(JOB, 1, T0)
    start = T0 + 10 * S
    # tasks 0, 1, 3: one attempt each, durations 100 s (A), 200 s (B), 600 s (A)
    for task, dur, mach in ((0, 100, A), (1, 200, B), (3, 600, A)):
        m.run(JOB, task, start, start + dur * S, machine=mach, usage=False)
    # task 2: fails after 50 s on C, retried on B where it runs 300 s: the SUCCESSFUL attempt counts
    m.event(JOB, 2, start, SUBMIT)
    m.event(JOB, 2, start, SCHEDULE, C)
    m.event(JOB, 2, start + 50 * S, FAIL, C)
    m.event(JOB, 2, start + 51 * S, SUBMIT)
    m.event(JOB, 2, start + 60 * S, SCHEDULE, B)
    m.event(JOB, 2, start + 360 * S, FINISH, B)
    # a job below min_tasks: not selected, its task never enters the durations
    m.job(SMALL, 1, T0)
    m.run(SMALL, 0, start, start + 999 * S, machine=C, usage=False)
    return m


def test_zscores_within_the_job_by_hand(tmp_path):
    _trace().write(tmp_path / "raw")
    s = SelectionSettings(trace="synthetic", min_tasks=3)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    stage_google(con, tmp_path / "raw", s)
    build_jobs(con, s)
    build_attempts(con, tmp_path / "raw", s)
    attempts = con.execute("SELECT task_id, attempt, machine_id, end_event FROM task_attempts "
                           "WHERE job_id = ? ORDER BY task_id, attempt", [JOB]).fetchall()
    assert (2, 1, C, FAIL) in attempts and (2, 2, B, FINISH) in attempts and len(attempts) == 5
    assert build_table(con, "node_task_durations", s) == 4
    got = dict(con.execute("SELECT task_id, z FROM node_task_durations ORDER BY task_id").fetchall())
    machines = dict(con.execute("SELECT task_id, machine_id FROM node_task_durations").fetchall())
    # durations 100, 200, 300, 600: mean 300, sample sd sqrt((200^2 + 100^2 + 0 + 300^2) / 3) = 216.0247
    sd = np.sqrt(140_000 / 3)
    assert got == pytest.approx({0: -200 / sd, 1: -100 / sd, 2: 0.0, 3: 300 / sd})
    assert machines == {0: A, 1: B, 2: B, 3: A}
    # indicators of machine A: z = (-200, 300) / sd -> mean 50 / sd
    ind = node_indicators(con.execute("SELECT machine_id, z FROM node_task_durations").df(),
                          NodeSettings(min_tasks_per_node=3))
    assert ind.empty   # A and B have 2 tasks each: below the minimum
    ind = node_indicators(pd.DataFrame({"machine_id": [A] * 3 + [B] * 3, "z": [1.0, 2.0, 3.0, -1.0, 0.0, 1.0]}),
                          NodeSettings(min_tasks_per_node=3))
    # mean 2, sd 1, t(0.975, 2) = 4.3027: CI [2 - 4.3027/sqrt(3), 2 + ...] = [-0.484, 4.484], overlaps B's
    row = ind.set_index("machine_id").loc[A]
    assert row.mean_z == pytest.approx(2.0) and row.ci_lo == pytest.approx(2 - 4.302653 / np.sqrt(3), abs=1e-5)
    assert ind.level.tolist() == [0, 0]
    con.close()


def test_relaunches_avoid_excluded_machines():
    from stragglers.prediction.engine.draws import draw_relaunch_latencies
    from stragglers.prediction.copies.completion_tables import completion_table
    y = np.array([10.0, 20.0, 100.0])
    draws = draw_relaunch_latencies(y, np.random.default_rng(0), pool=np.array([True, True, False]))
    assert len(draws) == 3 and set(draws) <= {10.0, 20.0}
    # the slow task (100 s, on machine 9) is flagged at 5 s; relaunched it takes a sibling's latency.
    tasks = pd.DataFrame({"trace": "t", "job_id": 1, "task_id": [0, 1, 2], "latency_s": y, "machine_id": [7, 8, 9]})
    preds = pd.DataFrame({"trace": "t", "method": "m", "job_id": 1, "task_id": [2], "flagged_at_s": [5.0]})
    seeds = range(20)
    free = completion_table(tasks, preds, machines=[], seeds=seeds)
    avoid = completion_table(tasks, preds, machines=[], seeds=seeds, excluded_machines=frozenset({9}))
    # avoiding machine 9: the copy runs 10 or 20 s, new completion max(20, 5 + 10|20) -> 20 or 25 s,
    # reduction (100 - new) / 100 in {0.8, 0.75}; without the exclusion a draw of 100 s is possible
    r = avoid.reduction_mean.iloc[0]
    assert 0.75 <= r <= 0.8
    assert free.reduction_mean.iloc[0] < r
    with pytest.raises(ValueError, match="machine_id"):
        completion_table(tasks.drop(columns="machine_id"), preds, machines=[], excluded_machines=frozenset({9}))
