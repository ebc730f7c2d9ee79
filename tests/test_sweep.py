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
from stragglers.prediction.methods.rules import SPARK_GRID, spark_label, spark_setting
from stragglers.prediction.protocol import OPERATOR, adapt_job
from stragglers.prediction.simulate import JobData, replay_job
from stragglers.prediction.sweep import (
    NO_COPY, SweepCollector, SweepGrid, area_to_budget, budget_table, envelope, split_variant,
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


@pytest.mark.parametrize("name", SWEPT)
def test_the_sweep_replay_keeps_the_methods_own_flags_and_fallbacks(name):
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


def test_the_budget_table_pairs_each_method_with_the_best_free_rule():
    rows = []
    for j in range(8):
        rows += [("t", "spark_speculation", "p", j, 0.01, 0.005, 1), ("t", "km_survival", "p", j, 0.0, 0.001, 1),
                 ("t", "nurd", "x", j, 0.03 + 0.001 * j, 0.004, 1), ("t", "nurd", "y", j, 0.5, 0.5, 9)]
    out = pd.DataFrame(rows, columns=["trace", "method", "point", "job_id", "jct_reduction",
                                      "extra_machine_share", "n_flagged"])
    earlier = {"t": {j: tuple(range(j)) for j in range(8)}}
    t = budget_table(out, earlier, ["spark_speculation", "km_survival"], min_jobs=2, budgets=[0.01], n_boot=200)
    nurd = t[t["method"] == "nurd"].iloc[0]
    assert nurd["reference"] == "spark_speculation" and nurd["point_mode"] == "x" and nurd["jobs_no_copy"] == 2
    # jobs 2..7 copy: nurd 0.03 + 0.001 j against spark's 0.01; jobs 0, 1: neither copies
    assert nurd["diff"] == pytest.approx(np.mean([0.02 + 0.001 * j for j in range(2, 8)] + [0, 0]))
    assert nurd["diff_lo"] > 0 and nurd["in_sample_point"] == "x"
