"""Every method at every budget (stragglers/prediction/sweep.py): one replay scores every cut of a
method's flag, its own flags unchanged; curve points against replays worked by hand; the tuned
rule reads no later job."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest

from stragglers.prediction.completion import draw_relaunch_latencies, job_rng
from stragglers.prediction.speculation import speculate_unlimited
from stragglers.prediction.completion import RELAUNCH_SEEDS
from stragglers.prediction.methods import METHODS
from stragglers.prediction.methods.rules import (
    SPARK_GRID, SPARK_MIN_RUNTIMES_S, SPARK_MULTIPLIERS, SPARK_QUANTILES, spark_label, spark_setting,
)
from stragglers.prediction.protocol import OPERATOR, adapt_job
from stragglers.prediction.simulate import JobData, JobResult, VariantResult, replay_job
from stragglers.prediction.sweep import (
    BUDGETS, NO_COPY, SweepCollector, SweepGrid, area_to_budget, budget_table, choosing_jobs, envelope,
    CAPPED_COLUMNS, CAPS, capped_rows, holm_intervals, paired_interval, split_variant,
    tuned_points,
)
from stragglers.settings import EvaluationSettings
from tests.jobs import make_job


def operator_job(seed: int = 0) -> JobData:
    return adapt_job(make_job(job_id=3 + seed, n=90, seed=seed), EvaluationSettings(workers=1, **OPERATOR))


def same(a, b) -> bool:
    return bool(np.array_equal(np.isnan(a), np.isnan(b)) and np.allclose(np.nan_to_num(a), np.nan_to_num(b)))


# every method but the survival family (its own threshold grid, tests/test_survival_family.py)
SWEPT = [m for m, cls in METHODS.items() if not cls.tags.learns_from_earlier_jobs]


def grid_lines(method) -> list[list[str]]:
    """A method's sweep points in lines of one cut each, ordered along that cut (Spark: the
    multiplier, per quantile and minTaskRuntime; the others: their grid)."""
    if method.name == "spark_speculation":
        return [[spark_label(q, m, mn) for m in SPARK_MULTIPLIERS] for q in SPARK_QUANTILES for mn in SPARK_MIN_RUNTIMES_S]
    if method.sweep_grid is None:
        return []
    return [[f"{v}@{g:g}" for g in method.sweep_grid] for v in method.variant_names]


@pytest.mark.parametrize("name", SWEPT)
def test_the_sweep_replay_keeps_the_methods_own_flags_and_its_cuts_are_nested(name):
    job = operator_job()
    alone = replay_job(job, METHODS[name]())
    swept = replay_job(job, SweepGrid(METHODS[name]))
    own = {v.method: v for v in swept.variants}
    for v in alone.variants:
        assert same(v.flagged_at, own[v.method].flagged_at), v.method
        assert pd.Series(v.scores).equals(pd.Series(own[v.method].scores))
    assert alone.fallbacks == swept.fallbacks
    points = [v.method for v in swept.variants if "@" in v.method]
    assert len(points) == len(METHODS[name]().sweep_points())
    # along each cut, the flagged tasks of a point are those of the next one or a subset of them,
    # flagged no later (or the reverse, for a cut that flags below it): the cheapest end of the grid
    # flags no more than its neighbour, and every point between them lies between
    for line in grid_lines(METHODS[name]()):
        f = np.stack([own[p].flagged_at for p in line])
        n = (~np.isnan(f)).sum(axis=1)
        if n[0] < n[-1]:
            f, n, line = f[::-1], n[::-1], line[::-1]
        for a, b, pa, pb in zip(f[:-1], f[1:], line[:-1], line[1:]):
            assert (np.isnan(b) | (a <= b)).all(), (pa, pb)     # b's tasks: flagged by a, no later
        assert (np.diff(n) <= 0).all(), dict(zip(line, n))
    if METHODS[name]().sweep_points():
        assert swept.score_trail is not None    # the scores its copies are ranked by


@pytest.mark.parametrize("name,point,alone", [
    ("spark_speculation", spark_label(0.5, 1.25, 60.0), partial(METHODS["spark_speculation"], 0.5, 1.25, 60.0)),
    ("spark_speculation", spark_label(0.9, 3.0, 0.1), METHODS["spark4_speculation"]),
    ("km_survival", "km_survival@0.8", partial(METHODS["km_survival"], min_probability=0.8)),
    ("coxph", "coxph@0.3", partial(METHODS["coxph"], threshold=0.3)),
    ("pu_en", "pu_en@0.3", partial(METHODS["pu_en"], threshold=0.3)),
    ("pu_bg", "pu_bg@0.7", partial(METHODS["pu_bg"], threshold=0.7)),
    ("iforest", "iforest@0.2", partial(METHODS["iforest"], contamination=0.2)),
    ("knn", "knn@0.05", partial(METHODS["knn"], contamination=0.05)),
])
def test_a_point_of_the_sweep_flags_as_the_method_set_to_it_alone(name, point, alone):
    job = operator_job(1)
    swept = {v.method: v for v in replay_job(job, SweepGrid(METHODS[name])).variants}
    one = replay_job(job, alone()).variants[0]
    assert swept[point].flagged_at.shape == one.flagged_at.shape
    assert same(one.flagged_at, swept[point].flagged_at)


def test_spark_labels_round_trip_and_the_grid_holds_both_default_sets():
    assert all(spark_setting(spark_label(*s)) == s for s in SPARK_GRID)
    assert (0.75, 1.5, 0.1) in SPARK_GRID and (0.9, 3.0, 0.1) in SPARK_GRID
    assert split_variant("nurd_nc@1.25") == ("nurd_nc", "1.25") and split_variant("nurd") == ("nurd", "default")


def test_a_curve_point_of_spark_is_the_replay_worked_by_hand():
    # five tasks on the common clock; Spark at quantile 0.5, multiplier 1.5: at t = 3.5 three of
    # five have finished (>= 2.5), their median is 2, 1.5 x 2 = 3 < 3.5: both running tasks
    # (latencies 4 and 10) get a copy at 3.5; at t = 2.5 only two had finished (< 2.5): nothing
    y = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    cps = np.array([0.5, 2.5, 3.5, 5.5, 7.5, 9.5])
    job = JobData(job_id=7, task_ids=np.arange(5), latency=y, checkpoints=cps, X=np.zeros((6, 5, 1)),
                  tau=4.0, feature_names=("f",))
    result = replay_job(job, SweepGrid(METHODS["spark_speculation"]))
    collector = SweepCollector("hand", {7: pd.Series(y, index=np.arange(5))})
    own = collector.add(result)
    assert [v.method for v in own.variants] == ["spark_speculation"]
    rows = collector.frame().set_index(["method", "point"])
    flags = np.array([np.nan, np.nan, np.nan, 3.5, 3.5])
    red = extra = 0.0
    for s in RELAUNCH_SEEDS:
        r = draw_relaunch_latencies(y, job_rng(s, "hand", 7))
        done = np.minimum(y, np.where(np.isnan(flags), y, flags + r))     # the copy or the original
        assert speculate_unlimited(y, flags, relaunch=r)[0] == done.max()
        red += (10.0 - done.max()) / 10.0
        extra += np.nansum(np.where(np.isnan(flags), 0.0, done - flags)) / y.sum()
    row = rows.loc[("spark_speculation", "q0.5-m1.5-min0.1")]
    assert row["jct_reduction"] == pytest.approx(red / len(RELAUNCH_SEEDS))
    assert row["extra_machine_share"] == pytest.approx(extra / len(RELAUNCH_SEEDS))
    assert row["n_flagged"] == 2
    # minTaskRuntime 60 s is above every latency: no copy, no gain, no cost
    assert rows.loc[("spark_speculation", "q0.5-m1.5-min60"), "extra_machine_share"] == 0.0


def test_the_tuned_rule_never_reads_a_later_job():
    rng = np.random.default_rng(0)
    jobs, points = list(range(10)), ["a", "b", "c"]
    jct = pd.DataFrame(rng.random((10, 3)) * 0.1, index=jobs, columns=points)
    extra = pd.DataFrame(rng.random((10, 3)) * 0.04, index=jobs, columns=points)
    earlier = {j: tuple(range(max(0, j - 1))) for j in jobs}     # job j: jobs 0..j-2 ended before it
    chosen = tuned_points(jct, extra, earlier, budget=0.02, min_jobs=2)
    for j in jobs:
        # scramble every job that did not end before j (j itself included): j's choice stands
        later = [i for i in jobs if i not in earlier[j]]
        j2, e2 = jct.copy(), extra.copy()
        j2.loc[later] = rng.random((len(later), 3))
        e2.loc[later] = rng.random((len(later), 3)) * 0.001
        assert tuned_points(j2, e2, earlier, 0.02, 2)[j] == chosen[j]
        if len(earlier[j]) < 2:
            assert chosen[j] == NO_COPY
        else:   # by hand: the best mean cut over the earlier jobs among points within budget
            m_j, m_e = jct.loc[list(earlier[j])].mean(), extra.loc[list(earlier[j])].mean()
            ok = m_j[m_e <= 0.02]
            assert chosen[j] == (ok.idxmax() if len(ok) else NO_COPY)


def test_envelope_and_area_to_budget_worked_by_hand():
    extra, jct = np.array([0.01, 0.03, 0.08]), np.array([0.02, 0.05, 0.2])
    assert envelope(extra, jct, 0.005) == (0.0, None)
    assert envelope(extra, jct, 0.04) == (0.05, 1)
    # 0 on [0, 1%), 2% on [1%, 3%), 5% on [3%, 5%]: (0 + 0.02 x 0.02 + 0.05 x 0.02) / 0.05
    assert area_to_budget(extra, jct, 0.05) == pytest.approx((0.02 * 0.02 + 0.05 * 0.02) / 0.05)


def _outcomes(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["trace", "method", "point", "job_id", "jct_reduction",
                                       "extra_machine_share", "n_flagged"])


def _learned(m: str) -> bool:
    return m not in ("spark_speculation", "km_survival")


def test_the_budget_table_compares_the_methods_named_on_the_first_half_on_the_second():
    rows = []
    for j in range(12):
        rows += [("t", "spark_speculation", "p", j, 0.01, 0.005, 1), ("t", "km_survival", "p", j, 0.0, 0.001, 1),
                 ("t", "nurd", "x", j, 0.03 + 0.001 * j, 0.004, 1), ("t", "nurd", "y", j, 0.5, 0.5, 9),
                 ("t", "gbtr", "x", j, 0.02, 0.004, 1)]
    out = _outcomes(rows)
    earlier = {"t": {j: tuple(range(j)) for j in range(12)}}
    choosing = {"t": frozenset(range(6))}
    t = budget_table(out, earlier, ["spark_speculation", "km_survival"], min_jobs=2, budgets=[0.01], n_boot=200,
                     choosing=choosing, learned=_learned).set_index("method")
    # named on jobs 0..5 (nurd's tuned mean there beats gbtr's), scored on jobs 6..11 only
    assert t.loc["nurd", "named"] == "learned method" and t.loc["spark_speculation", "named"] == "free rule"
    assert t.loc["gbtr", "named"] == "" and (t["n_jobs"] == 6).all() and (t["n_jobs_choosing"] == 6).all()
    assert t.loc["nurd", "reference"] == "spark_speculation" and t.loc["nurd", "point_mode"] == "x"
    assert t.loc["nurd", "jobs_no_copy"] == 0
    assert t.loc["nurd", "named_diff"] == pytest.approx(np.mean([0.02 + 0.001 * j for j in range(6, 12)]))
    assert t.loc["nurd", "named_diff_lo"] > 0 and np.isnan(t.loc["gbtr", "named_diff"])
    # the choosing half's tuned mean: jobs 0, 1 copy nothing, jobs 2..5 copy x
    assert t.loc["nurd", "choosing_jct_reduction"] == pytest.approx(np.mean([0, 0] + [0.03 + 0.001 * j for j in range(2, 6)]))
    assert t.loc["nurd", "in_sample_point"] == "x"

    # the names never read the scored jobs: scramble them and the names stand
    rng = np.random.default_rng(1)
    later = out["job_id"] >= 6
    out2 = out.copy()
    out2.loc[later, "jct_reduction"] = rng.random(int(later.sum()))
    t2 = budget_table(out2, earlier, ["spark_speculation", "km_survival"], min_jobs=2, budgets=[0.01], n_boot=200,
                      choosing=choosing, learned=_learned).set_index("method")
    assert t2["named"].to_dict() == t["named"].to_dict()


def test_holm_intervals_widen_with_the_family_and_agree_with_the_adjusted_p():
    rng = np.random.default_rng(0)
    diffs = {"clear": 0.05 + 0.01 * rng.normal(size=40), "weak": 0.004 + 0.01 * rng.normal(size=40),
             "none": 0.01 * rng.normal(size=40)}
    got = holm_intervals(diffs, n_boot=2000, seed=0)
    alone = holm_intervals({"clear": diffs["clear"]}, n_boot=2000, seed=0)["clear"]
    # alone, the interval is the plain 95% paired interval
    assert alone[1:3] == pytest.approx(paired_interval(diffs["clear"], 2000, 0))
    # in a family of three, the smallest p is tested at 0.05 / 3: a wider interval
    assert got["clear"][1] < alone[1] and got["clear"][2] > alone[2]
    ps = sorted(v[3] for v in got.values())
    assert ps == sorted(ps) and all(0 <= p <= 1 for p in ps)
    for mean, lo, hi, p in got.values():
        assert (lo > 0 or hi < 0) == (p <= 0.05)
    assert got["clear"][1] > 0 and got["none"][1] < 0 < got["none"][2]


def test_the_jobs_that_end_first_choose():
    times = pd.DataFrame({"job_id": [1, 2, 3, 4, 5], "end_us": [50, 10, 40, 20, 30], "cutoff_us": 0, "start_us": 0})
    assert choosing_jobs(times) == frozenset({2, 4, 5})
    # jobs that never ended (a Spark stage still running when its log stops) end after every other
    times = pd.DataFrame({"job_id": [1, 2, 3, 4, 5, 6], "end_us": [50, 10, 40, 20, None, None],
                          "cutoff_us": 0, "start_us": 0})
    assert choosing_jobs(times) == frozenset({2, 4})
    assert choosing_jobs(times.iloc[4:]) == frozenset()


def test_one_copy_model_gives_the_same_copies_everywhere(monkeypatch):
    """NURD_COPY_KEEPS reaches the evaluation, and the sweep, the cost-aware threshold's outcomes and
    the speculation table then give one job's flags the same outcome (and another at copy_keeps 0)."""
    from assets.resources import PipelineSettings
    from stragglers.prediction.completion_tables import speculation_jobs
    from stragglers.prediction.history import CostAwareSelection, grid_variant

    monkeypatch.setenv("NURD_COPY_KEEPS", "0.7")
    keeps = PipelineSettings().evaluation().copy_keeps
    assert keeps == 0.7
    rng = np.random.default_rng(3)
    y = np.round(100 + 400 * rng.lognormal(0, 0.6, 40), 3)
    f = np.where(rng.random(40) < 0.3, 90.0, np.nan)
    ids = np.arange(40)
    latency = pd.Series(y, index=ids)

    def variant(name):
        return VariantResult(name, f, np.ones(40, bool), {"f1": 0.5}, np.zeros(10))

    def everywhere(k):
        sweep = SweepCollector("tr", {7: latency}, k)
        sweep.add(JobResult(7, ids, [variant("spark_speculation@p")]))
        swept = tuple(sweep.frame().iloc[0][["jct_reduction", "extra_machine_share"]])
        sel = CostAwareSelection("tr", {}, {7: latency}, 1.0, 2, {"m": 0.5}, k, grid=(0.5,))
        sel.add(JobResult(7, ids, [variant(grid_variant("m", 0.5))]))
        chosen = tuple(sel.outcomes["m"][7][0])
        tasks = pd.DataFrame({"trace": "tr", "job_id": 7, "task_id": ids, "latency_s": y})
        preds = pd.DataFrame({"trace": "tr", "method": "m", "job_id": 7, "task_id": ids, "flagged_at_s": f})
        table = tuple(speculation_jobs(tasks, preds, RELAUNCH_SEEDS, copy_keeps=k).iloc[0][
            ["jct_reduction", "extra_machine_share"]])
        return swept, chosen, table

    swept, chosen, table = everywhere(keeps)
    assert swept == pytest.approx(chosen) and swept == pytest.approx(table)
    assert swept != pytest.approx(everywhere(0.0)[0])      # the setting changes the copies


def test_capped_copies_worked_by_hand():
    from stragglers.prediction.speculation import (
        HADOOP_CAP, copy_lease_seconds, ranked_by_truth, speculate_capped,
    )
    # a copy's lease at t: the median known then; at t = 4 three of four tasks have
    # finished (1, 2, 3 s), so the Kaplan-Meier median is defined: 2 s
    assert copy_lease_seconds([1.0, 2.0, 3.0, 50.0], [4.0]).tolist() == [2.0]
    y = np.array([2.0, 4.0, 10.0, 10.0, 100.0])
    e = copy_lease_seconds(y, [5.0])[0]      # three of five still run: the log-normal fit, >= t
    assert e >= 5.0
    machine = 2 + 4 + 5 + 5 + 5                 # machine seconds by t = 5
    # a budget for 2.5 medians starts two: the task that truly ends last, then the first of
    # the two that tie; both copies run 3 s (task 4 ends at 8, task 2 at 8)
    got = speculate_capped(y, [5.0], ranked_by_truth(y), np.full(5, 3.0), 2.5 * e / machine)
    assert got == (10.0, 3.0 + 3.0, 2)
    # copies slower than their lease are killed when it ends (the two share the room: 1.25 medians
    # each): task 4 goes on with its original (the job still ends at 100), its copy costs its lease;
    # task 2's copy stops when task 2 ends (10)
    got = speculate_capped(y, [5.0], ranked_by_truth(y), np.full(5, 1000.0), 2.5 * e / machine)
    assert got == (100.0, pytest.approx(1.25 * e + 5.0), 2)
    # one copy alone holds the whole room: a copy of 2.4 medians finishes within it (task 4 then
    # ends at 5 + 2.4 medians instead of 100)
    one = speculate_capped(y, [5.0], lambda k, t, copied: np.array([4]), np.full(5, 2.4 * e), 2.5 * e / machine)
    assert one == (pytest.approx(5.0 + 2.4 * e), pytest.approx(2.4 * e), 1)
    # a budget too small for one copy: nothing changes
    assert speculate_capped(y, [5.0], ranked_by_truth(y), np.full(5, 3.0), 0.9 * e / machine) == (100.0, 0.0, 0)
    # the oracle knows each copy's run too: task 4's copy (200 s from t = 5) would not beat its
    # original (100 s), so it is not started; tasks 2 and 3 (end at 10) get copies of 3 s, each on
    # a lease of exactly 3 s
    slow_last = np.array([3.0, 3.0, 3.0, 3.0, 200.0])
    knows = speculate_capped(y, [5.0], ranked_by_truth(y), slow_last, 2.5 * e / machine, knows_copies=True)
    assert knows == (100.0, 6.0, 2)
    # nothing finished: the median is unknown, no copy
    assert speculate_capped(y, [1.0], ranked_by_truth(y), np.full(5, 3.0), 0.5) == (100.0, 0.0, 0)
    # Hadoop's caps: max(10, 10% of 30 running, 1% of 30) = 10 copies at once
    y30 = np.arange(1.0, 31.0) + 10
    assert speculate_capped(y30, [5.0], ranked_by_truth(y30), np.full(30, 1.0), HADOOP_CAP)[2] == 10


def test_the_copies_a_method_ranks_first_start_first():
    from stragglers.prediction.speculation import ranked_by_cuts
    # three cuts (loose to strict): task 2 passes all three by t = 4, task 0 two, task 1 only the loosest
    F = np.array([[1.0, 1.0, 4.0, np.nan],
                  [1.0, np.nan, 4.0, np.nan],
                  [np.nan, np.nan, 4.0, np.nan]])
    ranked = ranked_by_cuts(F, 0, [1.0, 4.0])
    none = np.zeros(4, bool)
    assert ranked(0, 1.0, none).tolist() == [0, 1]          # at t = 1 task 2 is not flagged yet
    assert ranked(1, 4.0, none).tolist() == [2, 0, 1]
    assert ranked(1, 4.0, np.array([False, False, True, False])).tolist() == [0, 1]
    assert ranked_by_cuts(F, 2, [1.0, 4.0])(1, 4.0, none).tolist() == [2]


CAPPED_METHODS = ("spark_speculation", "km_survival", "wait_for_tau", "flag_all", "tobit")


def test_capped_spend_stays_within_budget_and_the_capped_oracle_bounds_every_method():
    collector = SweepCollector("capped", {})
    for seed in range(6):
        job = operator_job(seed)
        collector.latency[int(job.job_id)] = pd.Series(job.latency, index=job.task_ids)
        for name in (*CAPPED_METHODS, "oracle"):
            collector.add(replay_job(job, SweepGrid(METHODS[name])))
    capped = collector.capped_frame()
    assert set(capped["method"]) == {*CAPPED_METHODS, "oracle"}
    means = capped.groupby(["cap", "method", "point"])[["jct_reduction", "extra_machine_share"]].mean()
    copied = capped.groupby(["cap", "method", "point"])["n_copies"].mean()
    for b in BUDGETS:
        at = means.loc[f"{b:g}"]
        # every point of every method on every job: within the budget (a copy never outruns its lease)
        on_jobs = capped.loc[capped["cap"] == f"{b:g}", "extra_machine_share"]
        assert (on_jobs <= b + 1e-12).all(), on_jobs.max()
        oracle = at.loc[("oracle", "capped"), "jct_reduction"]
        others = at.drop(index="oracle", level=0)
        # the oracle's curve is at or above every method's point at that budget (simulation noise: 0.5 pp)
        assert oracle >= others["jct_reduction"].max() - 0.005, (b, oracle, others["jct_reduction"].idxmax())
    # 90 tasks: at 0.5% not one copy fits (its lease is above 0.5% of the machine time so far);
    # from 1% on the oracle copies
    assert copied.loc[("0.005", "oracle", "capped")] == 0 and copied.loc[("0.01", "oracle", "capped")] > 0
    # the uncapped flag-all spends far beyond every budget; capped, within each
    frame = collector.frame().set_index(["method", "point"]).sort_index()
    flag_all = frame.loc[("flag_all", "default"), "extra_machine_share"]
    assert flag_all.mean() > 0.05 and means.loc[("0.05", "flag_all", "default"), "extra_machine_share"] <= 0.055


def test_copies_of_tasks_that_never_finish_stay_within_the_budget_on_every_job():
    """Tasks killed long after the others finish (a job's teardown, or their own fate) are running
    at every decision: a policy that copies every running task would keep their copies running
    until their originals end. Under a budget each copy holds a lease, so no job spends above it."""
    from stragglers.prediction.speculation import capped_outcome, copy_draws, ranked_by_cuts

    rng = np.random.default_rng(3)
    for job_id in range(8):
        n = 120
        y = rng.lognormal(3.0, 0.6, n)
        finished = rng.random(n) > 0.15
        y[~finished] = y.max() * rng.uniform(1.5, 4.0, (~finished).sum())    # killed late, after long runs
        draws = copy_draws(y, "t", job_id, range(4), finished=finished)
        decisions = np.quantile(y[finished], [0.1, 0.3, 0.5, 0.7, 0.9])
        flags = np.where(y > decisions[0], decisions[0], np.nan)[None, :]    # flag-all at the first decision
        for b in BUDGETS:
            _, spend, copies = capped_outcome(y, decisions, ranked_by_cuts(flags, 0, decisions), draws, b)
            assert spend <= b + 1e-12, (job_id, b, spend)
        assert copies > 0


def test_the_budget_table_under_an_enforced_budget_scores_each_method_at_its_cap():
    rows, capped = [], []
    for j in range(10):
        rows += [("t", "spark_speculation", "p", j, 0.01, 0.02, 1), ("t", "nurd", "x", j, 0.2, 0.3, 9)]
        # capped at 1%: nurd's cut x (uncapped 30% extra, off the budget) now spends 1%, and one
        # job in ten is over the cap (the table counts it, whatever the cause)
        capped += [("t", "spark_speculation", "p", "0.01", j, 0.01, 0.009, 1.0),
                   ("t", "nurd", "x", "0.01", j, 0.03, 0.012 if j == 9 else 0.01, 1.0),
                   ("t", "oracle", "capped", "0.01", j, 0.05, 0.01, 1.0)]
    out = _outcomes(rows)
    capped = pd.DataFrame(capped, columns=CAPPED_COLUMNS)
    earlier = {"t": {j: tuple(range(j)) for j in range(10)}}
    kw = dict(min_jobs=2, budgets=[0.01], n_boot=200, choosing={"t": frozenset(range(5))}, learned=_learned)
    matched = budget_table(out, earlier, ["spark_speculation"], **kw).set_index("method")
    assert matched.loc["nurd", "point_mode"] == NO_COPY and not matched.loc["nurd", "enforced"]
    t = budget_table(out, earlier, ["spark_speculation"], capped=capped, **kw).set_index("method")
    assert "oracle" not in t.index and t["enforced"].all()
    assert t.loc["nurd", "point_mode"] == "x" and t.loc["nurd", "jct_reduction"] == pytest.approx(0.03)
    assert t.loc["nurd", "extra_machine_share"] == pytest.approx((4 * 0.01 + 0.012) / 5)
    assert t.loc["nurd", "jobs_over_budget"] == 1 and t.loc["spark_speculation", "jobs_over_budget"] == 0
    assert t.loc["nurd", "headroom"] == pytest.approx(0.05) and t.loc["nurd", "named_diff"] == pytest.approx(0.02)


def test_the_ratio_grid_spans_nurds_score_range():
    """NURD's score (its weighted prediction over tau) reaches 1 / eps = 20 x the prediction's ratio:
    the grid's top cut flags nothing, so NURD, NURD-NC and GBTR each have a point below 0.5%, and
    between the cut that copies every running task and none there is a point of NURD's own."""
    from stragglers.prediction.methods.nurd import NurdFamily
    collector = SweepCollector("grid", {})
    for seed in range(2):
        job = operator_job(seed)
        collector.latency[int(job.job_id)] = pd.Series(job.latency, index=job.task_ids)
        collector.add(replay_job(job, SweepGrid(NurdFamily)))
    curve = collector.frame().groupby(["method", "point"])["extra_machine_share"].mean()
    for method in ("nurd", "nurd_nc", "gbtr"):
        assert curve.loc[(method, "100")] == 0.0 and curve.loc[method].min() < 0.005
    # at the old top cut (3) NURD still copies as many tasks as at its own rule; past it, fewer
    assert curve.loc[("nurd", "3")] == curve.loc[("nurd", "default")]
    assert 0 < curve.loc[("nurd", "12.5")] < curve.loc[("nurd", "3")]


def test_capped_rows_rank_each_method_of_a_family_by_its_own_cuts_and_keep_jobs_without_flags():
    y = np.array([5.0, 10.0, 20.0, 40.0])
    ids = np.arange(4)

    def variant(name, f):
        return VariantResult(name, np.asarray(f, float), np.ones(4, bool), {}, np.zeros(10))

    nan = np.nan
    result = JobResult(1, ids, [variant("nurd", [nan, 6, 6, 6]), variant("nurd@2", [nan, nan, 6, nan]),
                                variant("gbtr", [nan] * 4), variant("gbtr@2", [nan] * 4)])
    rows = pd.DataFrame(capped_rows("t", result, pd.Series(y, index=ids)), columns=CAPPED_COLUMNS)
    assert set(zip(rows["method"], rows["point"])) == {("nurd", "default"), ("nurd", "2"), ("gbtr", "default"),
                                                     ("gbtr", "2")}
    # GBTR flagged nothing on this job: it is there, at no gain and no cost, under every cap
    g = rows[rows["method"] == "gbtr"]
    assert len(g) == 2 * len(CAPS) and (g[["jct_reduction", "extra_machine_share", "n_copies"]] == 0).all().all()



def test_the_capped_replay_copies_in_the_methods_score_order_not_by_how_many_cuts_passed():
    """Four tasks (2, 3, 9 and 40 s), cuts 1, 2 and 4.5 of a method's score (its own rule: 1). At
    t = 1 task 2 scores 5 (past every cut) and task 3 scores 1.5 (past the first); at t = 4 task 2's
    score falls to 1.2 and task 3's rises to 4 (past two cuts). By cuts passed, task 2 ranks first at
    t = 4 (three against two); by the latest score, task 3 does (4 against 1.2). With room for one
    copy at t = 4 (at t = 1 nothing has finished: no copy), the score's order copies task 3, the
    one that ends last, and the job ends earlier; the cuts' order copies task 2, and it does not."""
    from stragglers.prediction.simulate import ScoreRecorder
    from stragglers.prediction.speculation import copy_lease_seconds, ranked_by_cuts, ranked_by_score

    nan = np.nan
    y = np.array([2.0, 3.0, 9.0, 40.0])
    ids = np.arange(10, 14)
    rec = ScoreRecorder(ids)
    rec.add(1.0, ids[[2, 3]], {"m": np.array([5.0, 1.5])})
    rec.add(4.0, ids[[3, 2]], {"m": np.array([4.0, 1.2])})     # in any row order
    trail = rec.trail()
    np.testing.assert_array_equal(trail.latest("m", [0.5, 1.0, 4.0], 4),
                                  [[nan] * 4, [nan, nan, 5.0, 1.5], [nan, nan, 1.2, 4.0]])
    F = np.array([[nan, nan, 1.0, 1.0],       # cut 1, the method's own rule
                  [nan, nan, 1.0, 4.0],       # cut 2
                  [nan, nan, 1.0, nan]])      # cut 4.5
    decisions, none = [1.0, 4.0], np.zeros(4, bool)
    latest = trail.latest("m", decisions, 4)
    assert ranked_by_cuts(F, 0, decisions)(1, 4.0, none).tolist() == [2, 3]
    assert ranked_by_score(F[0], latest)(1, 4.0, none).tolist() == [3, 2]
    assert ranked_by_score(F[0], latest)(1, 4.0, np.array([False, False, False, True])).tolist() == [2]
    # equal scores: the earlier flagged first, then task order; a task with no score yet: last
    assert ranked_by_score(np.array([nan, nan, 4.0, 1.0]), np.full((2, 4), 2.0))(1, 4.0, none).tolist() == [3, 2]
    assert ranked_by_score(np.array([1.0, nan, 1.0, 1.0]), np.array([[nan, nan, nan, 0.5]]))(0, 1.0, none).tolist() \
        == [3, 0, 2]

    def variant(name, f):
        return VariantResult(name, np.asarray(f, float), np.ones(4, bool), {}, np.zeros(10))

    variants = [variant("m", F[0]), variant("m@2", F[1]), variant("m@4.5", F[2])]
    e = float(copy_lease_seconds(y, [4.0])[0])
    machine = 2.0 + 3.0 + 4.0 + 4.0                      # sum of min(y, 4) at t = 4
    cap = f"{1.5 * e / machine:.6g}"                    # room for one copy at t = 4, not two

    def outcome(trail):
        rows = capped_rows("t", JobResult(1, ids, variants, score_trail=trail), pd.Series(y, index=ids), caps=[cap])
        return pd.DataFrame(rows, columns=CAPPED_COLUMNS).set_index("point").loc["default"]

    by_score, by_cuts = outcome(trail), outcome(None)
    assert by_score["n_copies"] == 1.0 and by_cuts["n_copies"] == 1.0
    assert by_score["jct_reduction"] > 0 and by_cuts["jct_reduction"] == 0.0
