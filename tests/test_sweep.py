"""Every method at every budget (stragglers/prediction/verdicts/sweep.py, tuning.py): one replay scores every
cut of a method's flag, its own flags unchanged; each point of a replay becomes a policy of the replay
engine (``policies_of``) ranked by the method's own score, or by its cuts where it keeps none; a point's
outcome through the engine worked by hand; the one copy model everywhere; the tuned point reads no
later job; the cost curve's envelope and area worked by hand."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd
import pytest

from stragglers.prediction.engine.draws import RELAUNCH_SEEDS, copy_draws
from stragglers.prediction.engine.caps import Budget, HadoopCaps, Uncapped
from stragglers.prediction.engine.job import CopyJob
from stragglers.prediction.engine.policies import CURRENT, DEFAULT_POINT, ORACLE
from stragglers.prediction.engine.spark_rule import GRID, SPARK_3_DEFAULTS, SpeculationRule
from stragglers.prediction.methods import METHODS
from stragglers.prediction.replay.protocol import adapt_job
from stragglers.settings.protocols import OPERATOR
from stragglers.prediction.replay.simulate import JobData, JobResult, ScoreRecorder, VariantResult, replay_job
from stragglers.prediction.verdicts.sweep import (
    CAPPED_COLUMNS, CAPS, SweepCollector, SweepGrid, job_rows, policies_of, split_variant,
)
from stragglers.prediction.verdicts.tuning import (
    BUDGETS, NO_COPY, area_to_budget, curve_table, envelope, holm_intervals, paired_interval, tuned_outcomes,
    tuned_points,
)
from stragglers.settings import EvaluationSettings
from tests.jobs import make_job
from tests.test_replay_engine import hand_state

nan = np.nan
#: table sweep_outcomes: every point uncapped (the cost curves)
SWEEP_OUTCOMES = ["trace", "method", "point", "job_id", "jct_reduction", "extra_machine_share", "n_flagged"]


def operator_job(seed: int = 0) -> JobData:
    return adapt_job(make_job(job_id=3 + seed, n=90, seed=seed), EvaluationSettings(workers=1, **OPERATOR))


def engine_job(job: JobData, trace: str = "t", copy_keeps: float = 0.0) -> CopyJob:
    """The engine's job of a replay's job: its tasks, checked at the replay's decisions (after t0),
    copies drawn by the one copy model (as engine.jobs.copy_jobs draws them from the warehouse)."""
    n = len(job.task_ids)
    fin = np.ones(n, bool) if job.finished is None else job.finished
    return CopyJob(trace, int(job.job_id), job.task_ids, np.zeros(n) if job.start is None else job.start,
                   job.latency, fin, job.checkpoints[1:],
                   tuple(copy_draws(job.latency, trace, int(job.job_id), RELAUNCH_SEEDS, copy_keeps, finished=fin)))


def same(a, b) -> bool:
    return bool(np.array_equal(np.isnan(a), np.isnan(b)) and np.allclose(np.nan_to_num(a), np.nan_to_num(b)))


def variant(name, f, n=None) -> VariantResult:
    f = np.asarray(f, float)
    return VariantResult(name, f, np.ones(len(f), bool), {}, np.zeros(10))


# every method but the survival family (its own threshold grid, tests/test_survival_family.py)
SWEPT = [m for m, cls in METHODS.items() if not cls.tags.learns_from_earlier_jobs]


def grid_lines(method) -> list[list[str]]:
    """A method's sweep points in lines of one cut each, ordered along that cut (Spark's rule has no
    cuts in a replay: its settings are the engine's, ``spark_rule.GRID``)."""
    if method.sweep_grid is None:
        return []
    return [[f"{v}@{g:g}" for g in method.sweep_grid] for v in method.variant_names]


# ----------------------------------------------------------------------------- one replay, every cut

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


def test_a_variants_name_is_its_method_and_point():
    assert split_variant("nurd_nc@1.25") == ("nurd_nc", "1.25") and split_variant("nurd") == ("nurd", "default")


# ----------------------------------------------------------------------------- a replay's points as policies

def family_result(ids, checkpoints, variants, trail=None) -> JobResult:
    return JobResult(1, np.asarray(ids), variants, score_trail=trail, checkpoints=np.asarray(checkpoints, float))


def versions(policy) -> list[tuple[float, list[int]]]:
    return [(float(t), policy.order[policy.ptr[v]:policy.ptr[v + 1]].tolist())
            for v, t in enumerate(policy.version_times)]


def test_each_method_of_a_family_ranks_its_copies_by_its_own_score_and_one_without_a_score_by_its_cuts():
    """One replay of the NURD family (NURD, NURD-NC, GBTR) with a cut each: NURD ranks the three tasks
    it flags by its score, NURD-NC by its own (the reverse), and GBTR, which kept no score, by how many
    of its cuts flagged each task; a flag given after its task ended asks for no copy."""
    ids, y = np.arange(10, 14), np.array([2.0, 30.0, 40.0, 50.0])
    job = CopyJob("t", 1, ids, np.zeros(4), y, np.ones(4, bool), np.array([1.0]), (np.ones(4),))
    rec = ScoreRecorder(ids)
    rec.add(1.0, ids[1:], {"nurd": np.array([1.0, 2.0, 3.0]), "nurd_nc": np.array([3.0, 2.0, 1.0])})
    three, late = [nan, 1.0, 1.0, 1.0], [4.0, 1.0, 1.0, 1.0]          # task 0 flagged at 4, ended at 2
    result = family_result(ids, [0.5, 1.0, 4.0], [
        variant("nurd", three), variant("nurd@2", [nan, nan, nan, 1.0]), variant("nurd_nc", late),
        variant("nurd_nc@2", [nan, nan, nan, nan]), variant("gbtr", three), variant("gbtr@2", [nan, nan, 1.0, nan])],
        rec.trail())
    got = {(p.method, p.point): p for p in policies_of(result, job)}
    assert set(got) == {(m, p) for m in ("nurd", "nurd_nc", "gbtr") for p in ("default", "2")}
    assert versions(got[("nurd", "default")]) == [(1.0, [3, 2, 1])]
    assert versions(got[("nurd_nc", "default")]) == [(1.0, [1, 2, 3])]
    assert versions(got[("gbtr", "default")]) == [(1.0, [2, 1, 3])]       # task 2: two cuts; 1 and 3: one
    assert np.isnan(got[("nurd_nc", "default")].flagged_at[0]) and got[("nurd_nc", "default")].n_flagged == 3
    assert versions(got[("nurd_nc", "2")]) == [(1.0, [])] and got[("nurd_nc", "2")].n_flagged == 0
    # the engine copies in those orders: with room for one copy at the job's one check (set by hand:
    # 10% of a base of 100 s, each copy expected to cost 6 s), NURD copies task 3 and NURD-NC task 1
    hand_state(job, base=100.0, cost=(6.0, 6.0))
    rows = pd.DataFrame(job_rows("t", result, job, caps=[Budget(0.1)]), columns=CAPPED_COLUMNS)
    first = rows[rows["point"] == "default"].set_index("method")
    assert (first["n_copies"] == 1).all()
    # every task's copy runs 1 s from 1: NURD's copy of the last task (50 s) leaves the job at 40 s,
    # NURD-NC's of task 1 leaves it at 50 s
    assert first.loc["nurd", "jct_reduction"] == pytest.approx(10 / 50) and first.loc["nurd_nc", "jct_reduction"] == 0


def test_a_method_without_a_score_ranks_by_cuts_passed_then_the_earlier_flagged():
    # three cuts (loose to strict): task 2 passes all three by t = 4, task 0 two, task 1 only the loosest
    ids = np.arange(4)
    job = CopyJob("t", 1, ids, np.zeros(4), np.full(4, 100.0), np.ones(4, bool), np.array([1.0, 4.0]), (np.ones(4),))
    F = [[1.0, 1.0, 4.0, nan], [1.0, nan, 4.0, nan], [nan, nan, 4.0, nan]]
    result = family_result(ids, [0.5, 1.0, 4.0], [variant("m", F[0]), variant("m@a", F[1]), variant("m@b", F[2])])
    got = {p.point: p for p in policies_of(result, job)}
    assert versions(got["default"]) == [(1.0, [0, 1]), (4.0, [2, 0, 1])]       # at 1 task 2 is not flagged yet
    assert versions(got["a"]) == [(1.0, [0]), (4.0, [2, 0])]
    assert versions(got["b"]) == [(1.0, []), (4.0, [2])]
    # no checkpoints kept: the decisions are the flags' times
    result = JobResult(1, ids, result.variants)
    assert versions({p.point: p for p in policies_of(result, job)}["default"]) == [(1.0, [0, 1]), (4.0, [2, 0, 1])]


def test_the_capped_replay_copies_in_the_methods_score_order_not_by_how_many_cuts_passed():
    """Four tasks (2, 3, 9 and 40 s), cuts 1, 2 and 4.5 of a method's score (its own rule: 1). At
    t = 1 task 2 scores 5 (past every cut) and task 3 scores 1.5 (past the first); at t = 4 task 2's
    score falls to 1.2 and task 3's rises to 4 (past two cuts). By cuts passed, task 2 ranks first at
    t = 4 (three against two); by the latest score, task 3 does (4 against 1.2). With room for one
    copy at t = 4 (at t = 1 nothing has finished: no copy), the score's order copies task 3, the
    one that ends last, and the job ends earlier; the cuts' order copies task 2, and it does not."""
    y = np.array([2.0, 3.0, 9.0, 40.0])
    ids = np.arange(10, 14)
    rec = ScoreRecorder(ids)
    rec.add(1.0, ids[[2, 3]], {"m": np.array([5.0, 1.5])})
    rec.add(4.0, ids[[3, 2]], {"m": np.array([4.0, 1.2])})     # in any row order
    trail = rec.trail()
    np.testing.assert_array_equal(trail.latest("m", [0.5, 1.0, 4.0], 4),
                                  [[nan] * 4, [nan, nan, 5.0, 1.5], [nan, nan, 1.2, 4.0]])
    F = [[nan, nan, 1.0, 1.0],       # cut 1, the method's own rule
         [nan, nan, 1.0, 4.0],       # cut 2
         [nan, nan, 1.0, nan]]       # cut 4.5
    variants = [variant("m", F[0]), variant("m@2", F[1]), variant("m@4.5", F[2])]

    def outcome(trail):
        job = CopyJob("t", 1, ids, np.zeros(4), y, np.ones(4, bool), np.array([1.0, 4.0]), (np.ones(4),))
        hand_state(job, base=100.0, cost=(6.0, 6.0), estimate=[-1, 0])      # 10 s of room: one copy of 6 s
        result = family_result(ids, [0.5, 1.0, 4.0], variants, trail)
        by_point = {p.point: p for p in policies_of(result, job)}
        rows = pd.DataFrame(job_rows("t", result, job, caps=[Budget(0.1)]), columns=CAPPED_COLUMNS)
        return versions(by_point["default"]), rows.set_index("point").loc["default"]

    (ranked_by_score, by_score), (ranked_by_cuts, by_cuts) = outcome(trail), outcome(None)
    # (by cuts the order at 4 is the one at 1: one version, from 1)
    assert ranked_by_score == [(1.0, [2, 3]), (4.0, [3, 2])] and ranked_by_cuts == [(1.0, [2, 3])]
    assert by_score["n_copies"] == 1.0 and by_cuts["n_copies"] == 1.0
    assert by_score["jct_reduction"] == pytest.approx((40 - 9) / 40) and by_cuts["jct_reduction"] == 0.0
    # equal scores: the earlier flagged first, then task order; a task with no score yet: last
    job = CopyJob("t", 1, ids, np.zeros(4), y, np.ones(4, bool), np.array([1.0]), (np.ones(4),))
    rec = ScoreRecorder(ids)
    rec.add(1.0, ids[[3]], {"m": np.array([0.5])})
    ties = family_result(ids, [0.5, 1.0], [variant("m", [1.0, nan, 1.0, 1.0])], rec.trail())
    assert versions(policies_of(ties, job)[0]) == [(1.0, [3, 0, 2])]


def test_the_oracles_and_sparks_replays_become_the_engines_own_policies():
    ids = np.arange(5)
    job = CopyJob("t", 1, ids, np.zeros(5), np.array([1.0, 2.0, 3.0, 4.0, 10.0]), np.ones(5, bool),
                  np.arange(0.5, 10.5, 0.5), (np.ones(5),))
    (o,) = policies_of(JobResult(1, ids, [variant("oracle", [nan] * 5)]), job)
    assert (o.method, o.point, o.knows_copies) == (ORACLE, "capped", True)
    spark = policies_of(JobResult(1, ids, [variant("spark_speculation", [nan] * 5)]), job)
    assert [p.point for p in spark] == [DEFAULT_POINT] + [r.point for r in GRID]
    # where the application ran speculation, the setting it ran with too
    ran = replace(job, app_rule=SpeculationRule(0.5, 2.0, 1.0))
    assert [p.point for p in policies_of(JobResult(1, ids, [variant("spark_speculation", [nan] * 5)]), ran)][-1] \
        == CURRENT
    (four,) = policies_of(JobResult(1, ids, [variant("spark4_speculation", [nan] * 5)]), job)
    assert four.point == DEFAULT_POINT
    # a replay of tasks the engine's job does not have is an error, not a silent drop
    with pytest.raises(LookupError):
        policies_of(JobResult(1, np.arange(6), [variant("m", [nan] * 6)]), job)


def test_a_point_of_spark_through_the_engine_worked_by_hand():
    # five tasks on the common clock, checked every 0.5 s; Spark at quantile 0.5, multiplier 1.5: two
    # successes open the gate (floor(2.5)), at 2 s the threshold is 1.5 x 1.5 = 2.25, so at 2.5 s the
    # three running tasks (3, 4 and 10 s) get a copy; each task ends at min(its end, 2.5 + its copy)
    y = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    draws = copy_draws(y, "hand", 7, RELAUNCH_SEEDS)
    job = CopyJob("hand", 7, np.arange(5), np.zeros(5), y, np.ones(5, bool), np.arange(0.5, 10.5, 0.5), tuple(draws))
    collector = SweepCollector("hand", {7: job})
    own = collector.add(JobResult(7, np.arange(5), [variant("spark_speculation", [nan] * 5)]))
    assert [v.method for v in own.variants] == ["spark_speculation"] and own.score_trail is None
    rows = collector.frame().set_index(["method", "point"])
    assert list(collector.frame().columns) == SWEEP_OUTCOMES
    red, extra = [], []
    for c in draws:
        done = np.r_[y[:2], np.minimum(y[2:], 2.5 + c[2:])]
        red.append((10.0 - done.max()) / 10.0)
        extra.append((done[2:] - 2.5).sum() / y.sum())
    row = rows.loc[("spark_speculation", "q0.5-m1.5-min0.1")]
    assert row["jct_reduction"] == pytest.approx(np.mean(red)) and row["extra_machine_share"] == pytest.approx(
        np.mean(extra))
    assert row["n_flagged"] == 3
    # minTaskRuntime 60 s is above every latency: no copy, no gain, no cost
    assert rows.loc[("spark_speculation", "q0.5-m1.5-min60"), "extra_machine_share"] == 0.0
    # Spark 3's defaults are the method's own point: the same row as the grid's q0.75-m1.5-min0.1
    assert rows.loc[("spark_speculation", "default")].equals(rows.loc[("spark_speculation", SPARK_3_DEFAULTS.point)])
    # every point under every cap is kept (the budget tables' input), the uncapped ones are the curve
    capped = collector.capped_frame()
    assert set(capped["cap"]) == {c.label for c in CAPS} and len(capped) == len(CAPS) * (1 + len(GRID))
    with pytest.raises(LookupError):
        collector.score(JobResult(8, np.arange(5), [variant("m", [nan] * 5)]))


def test_a_family_member_that_flags_nothing_is_there_at_no_gain_and_no_cost_under_every_cap():
    y, ids = np.array([5.0, 10.0, 20.0, 40.0]), np.arange(4)
    job = CopyJob("t", 1, ids, np.zeros(4), y, np.ones(4, bool), np.array([6.0]),
                  tuple(copy_draws(y, "t", 1, RELAUNCH_SEEDS)))
    result = JobResult(1, ids, [variant("nurd", [nan, 6, 6, 6]), variant("nurd@2", [nan, nan, 6, nan]),
                                variant("gbtr", [nan] * 4), variant("gbtr@2", [nan] * 4)])
    rows = pd.DataFrame(job_rows("t", result, job), columns=CAPPED_COLUMNS)
    assert set(zip(rows["method"], rows["point"])) == {("nurd", "default"), ("nurd", "2"), ("gbtr", "default"),
                                                     ("gbtr", "2")}
    g = rows[rows["method"] == "gbtr"]
    assert len(g) == 2 * len(CAPS) and (g[["jct_reduction", "extra_machine_share", "n_copies"]] == 0).all().all()
    # nurd's own rule uncapped: a copy of each of its three tasks at 6 s, the mean over the draws
    u = rows[(rows["method"] == "nurd") & (rows["point"] == "default") & (rows["cap"] == "none")].iloc[0]
    assert u["n_copies"] == 3 and u["n_flagged"] == 3
    assert u["extra_machine_share"] == pytest.approx(np.mean([
        (np.minimum(y[1:], 6 + c[1:]) - 6).sum() / y.sum() for c in job.copies]))


CAPPED_METHODS = ("km_survival", "wait_for_tau", "flag_all", "tobit")


def test_on_replayed_jobs_the_budget_holds_to_its_base_and_the_oracle_bounds_every_point():
    """Replays of the operator's protocol (one wave of 90 tasks) through the collector: under each
    budget no point of any method spends above the budget of the job's largest base (the engine's
    guarantee), the oracle's mean cut is at or above every point's, and uncapped flag-all spends far
    beyond every budget while capped it spends about the budget."""
    jobs, results = {}, []
    for seed in range(4):
        job = operator_job(seed)
        jobs[int(job.job_id)] = engine_job(job, "capped")
        results += [replay_job(job, SweepGrid(METHODS[name])) for name in (*CAPPED_METHODS, "oracle",
                                                                             "spark_speculation")]
    collector = SweepCollector("capped", jobs)
    for r in results:
        collector.add(r)
    capped = collector.capped_frame()
    assert set(capped["method"]) == {*CAPPED_METHODS, "oracle", "spark_speculation"}
    largest = {j: float(job.state.base.max()) / job.work for j, job in jobs.items()}
    means = capped.groupby(["cap", "method", "point"])[["jct_reduction", "extra_machine_share"]].mean()
    for b in BUDGETS:
        at = capped[capped["cap"] == Budget(b).label]
        assert (at["extra_machine_share"] <= b * at["job_id"].map(largest) + 1e-12).all()
        m = means.loc[Budget(b).label]
        assert m.loc[(ORACLE, "capped"), "jct_reduction"] >= m.drop(index=ORACLE, level=0)["jct_reduction"].max()
        flag_all = m.loc[("flag_all", "default"), "extra_machine_share"]
        assert 0.5 * b <= flag_all <= 1.5 * b, (b, flag_all)
    uncapped = means.loc[Uncapped().label]
    assert uncapped.loc[("flag_all", "default"), "extra_machine_share"] > 4 * max(BUDGETS)
    # Hadoop's caps (at most 10 copies at once on 90 tasks) copy no more than a copy per flag
    copies = capped.pivot_table(index=["method", "point", "job_id"], columns="cap", values="n_copies")
    assert (copies[HadoopCaps().label] <= copies[Uncapped().label]).all()
    assert (copies[HadoopCaps().label] < copies[Uncapped().label]).any()


def test_the_ratio_grid_spans_nurds_score_range():
    """NURD's score (its weighted prediction over tau) reaches 1 / eps = 20 x the prediction's ratio:
    the grid's top cut flags nothing, so NURD, NURD-NC and GBTR each have a point below 0.5%, and
    between the cut that copies every running task and none there is a point of NURD's own."""
    from stragglers.prediction.methods.nurd import NurdFamily
    jobs, results = {}, []
    for seed in range(2):
        job = operator_job(seed)
        jobs[int(job.job_id)] = engine_job(job, "grid")
        results.append(replay_job(job, SweepGrid(NurdFamily)))
    collector = SweepCollector("grid", jobs)
    for r in results:
        collector.add(r)
    curve = collector.frame().groupby(["method", "point"])["extra_machine_share"].mean()
    for method in ("nurd", "nurd_nc", "gbtr"):
        assert curve.loc[(method, "100")] == 0.0 and curve.loc[method].min() < 0.005
    # at the old top cut (3) NURD still copies as many tasks as at its own rule; past it, fewer
    assert curve.loc[("nurd", "3")] == curve.loc[("nurd", "default")]
    assert 0 < curve.loc[("nurd", "12.5")] < curve.loc[("nurd", "3")]


def test_one_copy_model_gives_the_same_copies_everywhere(monkeypatch):
    """NURD_COPY_KEEPS reaches the evaluation, and the sweep, the cost-aware threshold's outcomes and
    the speculation table then give one job's flags the same outcome (and another at copy_keeps 0)."""
    from assets.resources import PipelineSettings
    from stragglers.prediction.copies.completion_tables import speculation_jobs
    from stragglers.prediction.evaluation.history import CostAwareSelection, grid_variant

    monkeypatch.setenv("NURD_COPY_KEEPS", "0.7")
    keeps = PipelineSettings().evaluation().copy_keeps
    assert keeps == 0.7
    rng = np.random.default_rng(3)
    y = np.round(100 + 400 * rng.lognormal(0, 0.6, 40), 3)
    f = np.where(rng.random(40) < 0.3, 90.0, np.nan)
    ids = np.arange(40)
    latency = pd.Series(y, index=ids)

    def everywhere(k):
        job = CopyJob("tr", 7, ids, np.zeros(40), y, np.ones(40, bool), np.array([90.0]),
                      tuple(copy_draws(y, "tr", 7, RELAUNCH_SEEDS, k)))
        sweep = SweepCollector("tr", {7: job})
        sweep.add(JobResult(7, ids, [variant("m", f)]))
        swept = tuple(sweep.frame().iloc[0][["jct_reduction", "extra_machine_share"]])
        sel = CostAwareSelection("tr", {}, {7: latency}, 1.0, 2, {"m": 0.5}, k, grid=(0.5,))
        sel.add(JobResult(7, ids, [variant(grid_variant("m", 0.5), f)]))
        chosen = tuple(sel.outcomes["m"][7][0])
        tasks = pd.DataFrame({"trace": "tr", "job_id": 7, "task_id": ids, "latency_s": y})
        preds = pd.DataFrame({"trace": "tr", "method": "m", "job_id": 7, "task_id": ids, "flagged_at_s": f})
        table = tuple(speculation_jobs(tasks, preds, RELAUNCH_SEEDS, copy_keeps=k).iloc[0][
            ["jct_reduction", "extra_machine_share"]])
        return swept, chosen, table

    swept, chosen, table = everywhere(keeps)
    assert swept == pytest.approx(chosen) and swept == pytest.approx(table)
    assert swept[1] > 0 and swept != pytest.approx(everywhere(0.0)[0])      # the setting changes the copies


# ----------------------------------------------------------------------------- tuning on earlier jobs

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


def test_tuned_outcomes_score_each_job_at_the_point_its_earlier_jobs_chose():
    rows = []
    for j in range(4):
        rows += [("t", "m", "x", "0.02", j, 0.01 * (j + 1), 0.01, 2.0, 1), ("t", "m", "y", "0.02", j, 0.05, 0.03, 5.0, 1)]
    out = pd.DataFrame(rows, columns=CAPPED_COLUMNS)
    earlier = {j: tuple(range(j)) for j in range(4)}
    got = tuned_outcomes(out, earlier, 0.02, min_jobs=1).set_index("job_id")
    # job 0: nothing ended before it (no copy); jobs 1-3: y spends 3% > 2%, x is chosen
    assert got["point"].tolist() == [NO_COPY, "x", "x", "x"]
    assert got.loc[0, ["jct_reduction", "extra_machine_share", "n_copies"]].tolist() == [0.0, 0.0, 0.0]
    assert got.loc[2, "jct_reduction"] == pytest.approx(0.03) and got.loc[2, "n_copies"] == 2.0
    # without a budget (inf: the cap already holds every point to it) the best mean cut, y
    assert tuned_outcomes(out, earlier, np.inf, min_jobs=1)["point"].tolist() == [NO_COPY, "y", "y", "y"]


def test_envelope_and_area_to_budget_worked_by_hand():
    extra, jct = np.array([0.01, 0.03, 0.08]), np.array([0.02, 0.05, 0.2])
    assert envelope(extra, jct, 0.005) == (0.0, None)
    assert envelope(extra, jct, 0.04) == (0.05, 1)
    # ties go to the cheaper point; a point that gains nothing is no copy
    assert envelope(np.array([0.02, 0.01]), np.array([0.05, 0.05]), 0.05) == (0.05, 1)
    assert envelope(np.array([0.0, 0.01]), np.array([0.0, -0.01]), 0.05) == (0.0, None)
    # 0 on [0, 1%), 2% on [1%, 3%), 5% on [3%, 5%]: (0 + 0.02 x 0.02 + 0.05 x 0.02) / 0.05
    assert area_to_budget(extra, jct, 0.05) == pytest.approx((0.02 * 0.02 + 0.05 * 0.02) / 0.05)
    assert area_to_budget(extra, jct, 0.005) == 0.0


def test_the_curve_is_each_points_mean_over_its_jobs():
    out = pd.DataFrame([("t", "m", "a", 1, 0.1, 0.01, 1), ("t", "m", "a", 2, 0.3, 0.03, 1),
                        ("t", "m", "b", 1, 0.0, 0.0, 0)], columns=SWEEP_OUTCOMES)
    c = curve_table(out).set_index("point")
    assert c.loc["a", ["n_jobs", "jct_reduction", "extra_machine_share"]].tolist() == pytest.approx([2, 0.2, 0.02])
    assert c.loc["b", "n_jobs"] == 1 and curve_table(out.iloc[0:0]).empty


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
