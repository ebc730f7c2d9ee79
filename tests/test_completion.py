"""Job completion time simulation (stragglers/prediction/copies/completion.py, docs/PROTOCOL.md section 6)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from stragglers.prediction.copies.completion import completion_limited, completion_unlimited
from stragglers.prediction.engine.draws import draw_relaunch_latencies, job_rng
from stragglers.prediction.copies.completion_tables import TABLE_COLUMNS, completion_jobs, completion_table

NAN = np.nan


# ---------------------------------------------------------------------------
# Algorithm 2
# ---------------------------------------------------------------------------

def test_unlimited_equal_latencies_known_answer():
    # every latency is 10, so y' = 10 whatever the draw
    y = np.full(4, 10.0)
    f = np.array([NAN, NAN, NAN, 5.0])
    assert completion_unlimited(y, f, np.random.default_rng(123)) == 15.0


def test_unlimited_fixed_relaunch():
    y = np.array([1.0, 2.0, 3.0, 100.0])
    f = np.array([NAN, NAN, NAN, 5.0])
    assert completion_unlimited(y, f, relaunch=np.array([9, 9, 9, 3.0])) == 8.0
    # the original is killed: a slow copy makes the task later than its original
    assert completion_unlimited(y, f, relaunch=np.array([9, 9, 9, 200.0])) == 205.0


def test_unlimited_draw_is_from_the_empirical_distribution():
    y = np.array([4.0, 7.0, 50.0, 100.0])
    f = np.array([1.0, NAN, NAN, 2.0])
    got = completion_unlimited(y, f, np.random.default_rng(7))
    d = y[np.random.default_rng(7).integers(0, 4, size=4)]
    assert got == max(1.0 + d[0], 7.0, 50.0, 2.0 + d[3])
    assert np.array_equal(draw_relaunch_latencies(y, np.random.default_rng(7)), d)


def test_no_flags_no_change():
    y = np.array([3.0, 5.0, 9.0])
    f = np.full(3, NAN)
    assert completion_unlimited(y, f, np.random.default_rng(0)) == 9.0
    assert completion_limited(y, f, [1.0, 2.0], 1, np.random.default_rng(0)) == 9.0


def test_flag_after_finish_is_ignored():
    y = np.array([3.0, 5.0, 9.0])
    f = np.array([NAN, NAN, 9.0])     # flagged at its own finish: not running any more
    assert completion_unlimited(y, f, relaunch=np.full(3, 100.0)) == 9.0


# ---------------------------------------------------------------------------
# Algorithm 3
# ---------------------------------------------------------------------------

Y = np.array([10.0, 12.0, 14.0, 100.0])
CP = np.array([5.0, 15.0, 25.0])
R20 = np.full(4, 20.0)


def test_limited_no_idle_machine_waits_for_a_finish_and_the_next_checkpoint():
    f = np.array([NAN, NAN, NAN, 5.0])
    assert completion_unlimited(Y, f, relaunch=R20) == 25.0
    # m = 2 < n = 4: no idle machine at 5; task 0 frees one at 10, so the
    # relaunch happens at the next checkpoint, 15, and ends at 35
    assert completion_limited(Y, f, CP, 2, relaunch=R20) == 35.0
    # m <= n: the answer does not depend on m
    assert completion_limited(Y, f, CP, 4, relaunch=R20) == 35.0


def test_limited_with_idle_machine_relaunches_at_once():
    f = np.array([NAN, NAN, NAN, 5.0])
    assert completion_limited(Y, f, CP, 5, relaunch=R20) == 25.0


def test_limited_many_machines_equals_unlimited_same_seed():
    rng = np.random.default_rng(3)
    y = rng.lognormal(3, 1, 200)
    f = np.where(rng.random(200) < 0.3, 1.0, NAN)
    f[y <= 1.0] = NAN
    cp = np.arange(1.0, 40.0, 2.0)
    a = completion_unlimited(y, f, np.random.default_rng(11))
    b = completion_limited(y, f, cp, 10_000, np.random.default_rng(11))
    assert a == b


def test_limited_fifo_second_flag_waits():
    # one idle machine (m = n + 1), two tasks flagged at 5: the first in task
    # order gets it, the second waits until task 0 finishes at 10 -> checkpoint 15
    y = np.array([10.0, 12.0, 100.0, 90.0])
    f = np.array([NAN, NAN, 5.0, 5.0])
    r = np.full(4, 20.0)
    assert completion_limited(y, f, CP, 5, relaunch=r) == 35.0   # 15 + 20 for task 3
    # earlier flag wins over task order
    f2 = np.array([NAN, NAN, 15.0, 5.0])
    assert completion_limited(y, f2, CP, 5, relaunch=np.array([0, 0, 1.0, 2.0])) == 16.0


def test_limited_original_finishes_while_waiting():
    y = np.array([10.0, 12.0, 14.0, 13.0])
    f = np.array([NAN, NAN, NAN, 5.0])
    # no machine until 10, next checkpoint 15 > 13: the task finished on its own
    assert completion_limited(y, f, CP, 2, relaunch=np.full(4, 1.0)) == 14.0


def test_limited_after_grid_event_vs_never():
    f = np.array([NAN, NAN, NAN, 5.0])
    cp = np.array([5.0])
    # grid ends at 5; a machine frees at 10 (task 0)
    assert completion_limited(Y, f, cp, 2, relaunch=R20, after_grid="event") == 30.0
    assert completion_limited(Y, f, cp, 2, relaunch=R20, after_grid="never") == 100.0
    with pytest.raises(ValueError):
        completion_limited(Y, f, cp, 2, relaunch=R20, after_grid="sometimes")


def test_relaunched_copy_frees_a_machine():
    # one idle machine (m = n + 1); task 3 is relaunched at 5, its copy ends
    # at 6 and returns the machine, which task 2 (flagged at 15) takes at 15
    y = np.array([30.0, 20.0, 70.0, 100.0])
    f = np.array([NAN, NAN, 15.0, 5.0])
    r = np.array([0, 0, 40.0, 1.0])
    assert completion_limited(y, f, CP, 5, relaunch=r) == 55.0
    # without that copy's machine task 2 would wait for task 1 (20) and the
    # checkpoint at 25: 25 + 40 = 65
    r_slow = np.array([0, 0, 40.0, 30.0])    # copy of task 3 runs 5..35
    assert completion_limited(y, f, CP, 5, relaunch=r_slow) == 65.0


def test_kill_frees_machine_changes_the_answer():
    y = np.array([50.0, 30.0, 70.0, 100.0])
    f = np.array([NAN, NAN, 15.0, 5.0])
    r = np.array([0, 0, 30.0, 40.0])
    # default: task 3 relaunched at 5 (copy until 45); its killed original's
    # machine is lost; task 2 waits past the grid until task 1 ends at 30 -> 60
    assert completion_limited(y, f, CP, 5, relaunch=r) == 60.0
    # kill frees: task 3's old machine is idle at 15 -> task 2 ends at 45;
    # the job ends with task 0 at 50
    assert completion_limited(y, f, CP, 5, relaunch=r, kill_frees_machine=True) == 50.0


# ---------------------------------------------------------------------------
# Cross-check against a slow, literal simulator
# ---------------------------------------------------------------------------

def reference_limited(y, f, cp, m, relaunch, kill_frees_machine=False, after_grid="event"):
    """Straightforward state machine, one task at a time (no shortcuts)."""
    n = len(y)
    idle = max(0, m - n)
    state = ["run"] * n                 # run | copy | done
    end = list(y)
    counted = [False] * n               # has this task's machine been returned?
    killed_pending = 0
    flagged = [i for i in range(n) if not math.isnan(f[i]) and f[i] < y[i]]
    flagged.sort(key=lambda i: (f[i], i))
    relaunched = set()
    grid = sorted(set(cp) | {f[i] for i in flagged})

    def step(t):
        nonlocal idle, killed_pending
        for i in range(n):
            if not counted[i] and end[i] <= t:
                counted[i] = True
                idle += 1
        idle += killed_pending
        killed_pending = 0
        for i in flagged:
            if i in relaunched or f[i] > t or y[i] <= t:
                continue
            if idle == 0:
                break
            idle -= 1
            relaunched.add(i)
            end[i] = t + relaunch[i]
            if kill_frees_machine:
                killed_pending += 1

    for t in grid:
        step(t)
    if after_grid == "event":
        t = grid[-1] if grid else 0.0
        while any(i not in relaunched and y[i] > t for i in flagged):
            t = min(e for e in end + list(y) if e > t)
            step(t)
    return max(end)


@pytest.mark.parametrize("kill", [False, True])
@pytest.mark.parametrize("after", ["event", "never"])
def test_matches_reference_simulator(kill, after):
    rng = np.random.default_rng(42)
    for trial in range(150):
        n = int(rng.integers(3, 25))
        y = np.round(rng.lognormal(2, 0.8, n), 1)
        cp = np.unique(np.round(np.sort(rng.uniform(0, np.quantile(y, 0.9), int(rng.integers(1, 8)))), 1))
        f = np.full(n, NAN)
        for i in range(n):
            if rng.random() < 0.5:
                cands = cp[cp < y[i]]
                if len(cands):
                    f[i] = cands[rng.integers(len(cands))]
        r = y[rng.integers(0, n, n)]
        m = int(rng.integers(1, n + 4))
        got = completion_limited(y, f, cp, m, relaunch=r, kill_frees_machine=kill, after_grid=after)
        want = reference_limited(y, f, list(cp), m, r, kill_frees_machine=kill, after_grid=after)
        assert got == pytest.approx(want), (trial, y, f, cp, m, r)


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

def make_frames(n_jobs=4, methods=("nurd", "gbtr", "none"), seed=0):
    rng = np.random.default_rng(seed)
    tasks, preds, cps = [], [], []
    for j in range(n_jobs):
        n = int(rng.integers(120, 400))
        y = rng.lognormal(5, 0.6, n)
        tau = np.quantile(y, 0.9)
        grid = np.linspace(np.quantile(y, 0.04), tau, 12)[:-1]
        tasks += [("synthetic", 1000 + j, i, y[i]) for i in range(n)]
        cps += [("synthetic", 1000 + j, c) for c in grid]
        for meth in methods:
            for i in range(n):
                fl = NAN
                if meth != "none" and y[i] > grid[0] and rng.random() < (0.8 if y[i] >= tau else 0.1):
                    cand = grid[grid < y[i]]
                    fl = cand[min(len(cand) - 1, int(rng.integers(0, 3)))]
                preds.append(("synthetic", meth, 1000 + j, i, fl))
    return (
        pd.DataFrame(tasks, columns=["trace", "job_id", "task_id", "latency_s"]),
        pd.DataFrame(preds, columns=["trace", "method", "job_id", "task_id", "flagged_at_s"]),
        pd.DataFrame(cps, columns=["trace", "job_id", "checkpoint_s"]),
    )


def test_completion_table_shape_and_no_flag_rows():
    T, P, C = make_frames()
    out = completion_table(T, P, C, machines=[100, 300, 900], seeds=range(3))
    assert list(out.columns) == TABLE_COLUMNS
    assert set(out["method"]) == {"nurd", "gbtr", "none"}
    assert len(out) == 3 * 4
    unl = out[out["algorithm"] == "unlimited"]
    assert unl["machines"].isna().all()
    lim = out[out["algorithm"] == "limited"]
    assert sorted(set(lim["machines"])) == [100.0, 300.0, 900.0]
    assert (out["n_jobs"] == 4).all()
    assert (out["seeds"] == "0,1,2").all()
    none = out[out["method"] == "none"]
    assert (none["reduction_mean"] == 0).all()
    assert (none["reduction_std_over_seeds"] == 0).all()
    # flagging stragglers early helps; more machines never hurt here
    nurd = out[out["method"] == "nurd"].set_index("machines")
    assert nurd.loc[900.0, "reduction_mean"] >= nurd.loc[100.0, "reduction_mean"]


def test_completion_table_reproducible_and_seed_dependent():
    T, P, C = make_frames(n_jobs=3)
    a = completion_table(T, P, C, machines=[100, 500], seeds=[0, 1])
    b = completion_table(T, P, C, machines=[100, 500], seeds=[0, 1])
    pd.testing.assert_frame_equal(a, b)
    c = completion_table(T, P, C, machines=[100, 500], seeds=[5, 6])
    assert not np.allclose(a["reduction_mean"].to_numpy()[:3], c["reduction_mean"].to_numpy()[:3])


def test_completion_jobs_match_single_job_api():
    T, P, C = make_frames(n_jobs=2)
    jobs = completion_jobs(T, P, C, machines=[100, 900], seeds=[4])
    job = T[T["job_id"] == 1001].sort_values("task_id")
    y = job["latency_s"].to_numpy()
    p = P[(P["job_id"] == 1001) & (P["method"] == "nurd")].sort_values("task_id")
    f = p["flagged_at_s"].to_numpy()
    cp = C[C["job_id"] == 1001]["checkpoint_s"].to_numpy()
    sel = jobs[(jobs["job_id"] == "1001") & (jobs["method"] == "nurd")].set_index("algorithm")
    assert sel.loc["unlimited", "new_s"] == completion_unlimited(y, f, job_rng(4, "synthetic", "1001"))
    lim = sel[sel["machines"] == 100.0]
    assert lim["new_s"].iloc[0] == completion_limited(y, f, cp, 100, job_rng(4, "synthetic", "1001"))
    assert sel.loc["unlimited", "reduction"] == pytest.approx(
        (y.max() - sel.loc["unlimited", "new_s"]) / y.max())


def test_unpredicted_tasks_and_jobs():
    T = pd.DataFrame({"trace": "t", "job_id": [1, 1, 1, 2, 2], "task_id": [0, 1, 2, 0, 1],
                      "latency_s": [10.0, 10.0, 40.0, 5.0, 6.0]})
    # job 2 has no prediction rows: left out; task 0 of job 1 has none: unflagged
    P = pd.DataFrame({"trace": "t", "method": "x", "job_id": [1, 1], "task_id": [1, 2],
                      "flagged_at_s": [NAN, 5.0]})
    C = pd.DataFrame({"trace": "t", "job_id": [1, 1], "checkpoint_s": [5.0, 8.0]})
    out = completion_table(T, P, C, machines=[100], seeds=[0, 1])
    assert (out["n_jobs"] == 1).all()
    # all latencies of the job are 10 or 40; the relaunch ends at 15 or 45
    jobs = completion_jobs(T, P, C, machines=[100], seeds=[0, 1])
    assert set(jobs["new_s"]) <= {15.0, 45.0}
    assert (jobs["reduction"] == (40 - jobs["new_s"]) / 40).all()
