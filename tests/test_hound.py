"""Hound (stragglers/diagnosis): learners, meta learning, ensemble, naming on
hand-made data with known answers; the Dagster assets on a small generated trace."""

import numpy as np
import pytest

from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.learners import (AdaBoostIPW, BaggedElasticNet, SignedSchweizerWolff,
                                           absolute_sum_one, signed_schweizer_wolff)


def _driven(seed=3, n=300):
    """Metric 0 drives latency up, metric 1 drives it down, metric 2 is noise (shuffled)."""
    rng = np.random.default_rng(seed)
    X = rng.lognormal(0.0, 0.5, size=(n, 3))
    y = 100 + 40 * X[:, 0] - 25 * X[:, 1] + rng.normal(0, 5, n)
    X[:, 2] = rng.permutation(X[:, 2])
    return X, y


@pytest.mark.parametrize("learner", [BaggedElasticNet(replicas=10), SignedSchweizerWolff(), AdaBoostIPW(rounds=20)],
                         ids=lambda l: l.name)
def test_learner_finds_the_driver_with_its_sign(learner):
    X, y = _driven()
    c = learner.profile(X, y)
    assert np.isclose(np.abs(c).sum(), 1.0)
    assert np.all(np.abs(c) <= 1.0)
    assert np.argmax(np.abs(c)) == 0 and c[0] > 0        # the strongest driver, positive
    assert c[1] < 0                                        # the negative driver keeps its sign
    assert abs(c[2]) < 0.1                                 # the shuffled metric gets ~0


def test_ssw_known_answers():
    rng = np.random.default_rng(0)
    x = rng.normal(size=500)
    assert signed_schweizer_wolff(x, -x) == pytest.approx(-1.0, abs=1e-9)
    assert signed_schweizer_wolff(x, np.exp(x)) == pytest.approx(1.0, abs=1e-9)   # invariant to increasing maps
    g = SignedSchweizerWolff().grid(500)
    assert signed_schweizer_wolff(x, -x**3, grid=g) < -0.95                          # sampled grid
    # independent pairs: the sign test answers 0 in most draws, and |SSW| stays small
    vals = [signed_schweizer_wolff(rng.normal(size=500), rng.normal(size=500), grid=g) for _ in range(30)]
    assert np.mean(np.array(vals) == 0.0) >= 0.5
    assert np.max(np.abs(vals)) < 0.2


def test_ssw_hand_computed():
    # x = (1, 2, 3), y = (1, 3, 2): ranks (1,1), (2,3), (3,2); u, v on the grid (1/3, 2/3, 1).
    # Empirical copula C = [[1,1,1],[1,1,2],[1,2,3]] / 3, u v = [[1,2,3],[2,4,6],[3,6,9]] / 9:
    # sum |C - u v| = 5/9 -> SWD = 12 / (9 - 1) * 5/9 = 5/6.
    # L1 = mean(min(u, v) - C) = (1/3) / 9 = 1/27, L2 = mean(C - max(u + v - 1, 0)) = 1 / 9 = 3/27:
    # L2 - L1 = 2/27 = 0.074 -> sign +1 for eps < 2/27, 0 above.
    assert signed_schweizer_wolff([1, 2, 3], [1, 3, 2], sign_tol=0.0) == pytest.approx(5 / 6)
    assert signed_schweizer_wolff([1, 2, 3], [1, 3, 2], sign_tol=0.07) == pytest.approx(5 / 6)
    assert signed_schweizer_wolff([1, 2, 3], [1, 3, 2], sign_tol=0.08) == 0.0


def test_absolute_sum_one_and_empty():
    assert np.allclose(absolute_sum_one([2.0, -2.0, 0.0]), [0.5, -0.5, 0.0])
    assert np.all(absolute_sum_one([0.0, 0.0]) == 0.0)


def test_settings_reject_bad_values():
    from stragglers.settings import SettingError
    with pytest.raises(SettingError, match="hound_min_tasks"):
        HoundSettings(min_tasks=1)


# ----------------------------------------------------------------------------- meta learning, ensemble, naming
from stragglers.diagnosis.topics import TopicModel, ensemble, meta_learn, trim  # noqa: E402
from stragglers.diagnosis.vocabulary import METRIC_COLUMNS, WORDS, name_topic  # noqa: E402


def _topic(**words):
    v = np.zeros(len(WORDS))
    for w, x in words.items():
        v[WORDS.index(w.replace("_p", "(+)").replace("_m", "(-)").upper()
                      .replace("(+)", "(+)"))] = x
    return v / v.sum()


def test_trim_hand_computed():
    assert np.allclose(trim([0.5, 0.45, 0.05], 0.1), [[0.5 / 0.95, 0.45 / 0.95, 0.0]])
    assert np.allclose(trim([0.0, 0.0], 0.1), [[0.0, 0.0]])


def test_ensemble_drops_a_topic_found_by_one_learner():
    mem = _topic(MEAN_MEM_p=0.5, PEAK_MEM_p=0.3, MEM_ASSIGN_p=0.2)
    cpu = _topic(MEAN_CPU_m=0.8, PEAK_CPU_m=0.2)
    fail = _topic(FAIL_p=1.0)                                  # only PR finds it (Hound Table 4: P12)
    jobs = [1, 2, 3]
    theta = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    pr = TopicModel("PR", np.vstack([mem, cpu, fail]), np.array([[0.7, 0.0, 0.3], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]]),
                    jobs)
    dp = TopicModel("DP", np.vstack([mem * 0.9 + cpu * 0.1, cpu]), theta, jobs)
    ca = TopicModel("CA", np.vstack([mem, cpu * 0.95 + mem * 0.05]), theta, jobs)
    ens = ensemble([pr, dp, ca])
    assert len(ens.topics) == 2
    assert ("PR", 2) in ens.dropped
    assert sorted(name_topic(t) for t in ens.topics) == ["data_skew", "limited_processor"]
    # job 1: PR 0.7 mem (0.3 lost with the dropped topic), DP 1.0, CA 1.0 -> mem only after averaging
    mem_e = [name_topic(t) for t in ens.topics].index("data_skew")
    assert ens.mixtures[0, mem_e] == pytest.approx(1.0)
    assert np.allclose(ens.mixtures.sum(axis=1), 1.0)


def test_ensemble_of_learners_that_found_nothing_is_empty():
    # every job's profile all zero (e.g. all metrics constant): no documents, no topics, no causes
    models = [meta_learn(name, [1, 2], np.zeros((2, len(METRIC_COLUMNS)))) for name in ("PR", "DP", "CA")]
    ens = ensemble(models)
    assert len(ens.topics) == 0 and ens.mixtures.shape == (2, 0)


def test_meta_learning_recovers_planted_topics():
    # 40 jobs: half with a memory profile, half with a queueing one; LDA must separate them
    P = len(METRIC_COLUMNS)
    mem, sched = np.zeros(P), np.zeros(P)
    mem[METRIC_COLUMNS.index("mean_mem")], mem[METRIC_COLUMNS.index("mem_assign")] = 0.6, 0.4
    sched[METRIC_COLUMNS.index("sched_delay")] = 1.0
    profiles = np.array([mem] * 20 + [sched] * 20)
    model = meta_learn("DP", list(range(40)), profiles, k_min=2, seed=0, k_max=4)
    names = [name_topic(t) for t in model.beta]
    assert "data_skew" in names and "queueing_delay" in names
    top = [names[i] for i in model.theta.argmax(axis=1)]
    assert top[:20] == ["data_skew"] * 20 and top[20:] == ["queueing_delay"] * 20
    assert np.allclose(model.theta.sum(axis=1), 1.0)


def test_naming_follows_table4():
    assert name_topic(_topic(CACHE_MISS_p=0.54, CPI_p=0.46)) == "cache_misses"
    assert name_topic(_topic(MEAN_IO_m=1.0)) == "limited_io"
    assert name_topic(_topic(FAIL_p=1.0)) is None                      # no named cause: stays keywords
    assert name_topic(_topic(MEAN_MEM_m=0.5, PEAK_MEM_p=0.5)) is None   # contradictory signs: unnamed


# ------------------------------------------------------------------------ share weights (docs/HOUND.md)
def _mild_cpu_strong_memory_job():
    """Hand-made job: 180 normal tasks, 20 stragglers (latency above the p90). 12 stragglers
    (60 %) have a mild CPU(-): their MEAN_CPU is the normal tasks' 25th percentile, well inside the
    normal range. 4 (20 %) have a strong memory(+): above every normal task on six data-skew metrics
    that move together (one input size). 4 have nothing. Every other value of a straggler is the
    normal tasks' median (as many normal tasks below as above). PEAK_CPU follows MEAN_CPU."""
    import pandas as pd
    rng = np.random.default_rng(1)
    n_norm = 180
    cpu_n = rng.permutation(np.arange(1.0, n_norm + 1))           # ranks 1..180 in random order
    mem_n = rng.permutation(np.arange(1.0, n_norm + 1))
    q25, med = 45.5, 90.5                                          # 45 below / 135 above; 90 / 90
    cpu_s = np.array([q25] * 12 + [med] * 8)
    mem_s = np.array([med] * 12 + [1000.0] * 4 + [med] * 4)
    cpu, mem = np.r_[cpu_n, cpu_s], np.r_[mem_n, mem_s]
    latency = np.r_[100 + np.arange(n_norm) * 0.1, 130 + np.arange(12), 300 + np.arange(4), 125 + np.arange(4)]
    df = pd.DataFrame({c: 0.0 for c in METRIC_COLUMNS}, index=range(len(cpu)))
    df["mean_cpu"], df["peak_cpu"] = cpu, 1.1 * cpu
    for c, k in (("mean_mem", 1.0), ("peak_mem", 1.2), ("mem_assign", 1.5), ("page_cache", 0.5),
                 ("page_cache_um", 0.3), ("disk_space", 2.0)):
        df[c] = k * mem
    df["job_id"], df["task_id"], df["latency_s"] = 7, np.arange(len(cpu)), latency
    return df


def _cause_mass(profile):
    from stragglers.diagnosis.vocabulary import WORD_CAUSE, words_of
    out = {}
    for w, p in zip(WORDS, words_of(profile)):
        if w in WORD_CAUSE:
            out[WORD_CAUSE[w]] = out.get(WORD_CAUSE[w], 0.0) + p
    return out


def test_straggler_shares_and_multiplicity_hand_computed():
    from stragglers.diagnosis.learners import job_matrix, multiplicity, straggler_shares
    X, y, _ = job_matrix(_mild_cpu_strong_memory_job())
    d = dict(zip(METRIC_COLUMNS, straggler_shares(X, y, 0.9)))
    # MEAN_CPU: 12 stragglers x (45 below - 135 above) / 180 = 12 x -0.5, 8 x 0, over 20 stragglers
    assert d["mean_cpu"] == pytest.approx(-0.3) and d["peak_cpu"] == pytest.approx(-0.3)
    # memory: 4 stragglers above all 180 normal tasks (+1 each), 16 at the median (0): 0.2 = their share
    for c in ("mean_mem", "peak_mem", "mem_assign", "page_cache", "page_cache_um", "disk_space"):
        assert d[c] == pytest.approx(0.2)
    assert d["sched_delay"] == 0.0                                  # constant: no straggler deviates
    m = dict(zip(METRIC_COLUMNS, multiplicity(X)))
    assert m["mean_mem"] == pytest.approx(6.0, abs=0.05)             # six metrics that move together
    assert m["mean_cpu"] == pytest.approx(2.0, abs=0.05)             # MEAN_CPU and PEAK_CPU
    assert m["sched_delay"] == 1.0


def test_share_weights_name_the_cause_of_most_stragglers():
    """60 % of the stragglers with a mild CPU(-) and 20 % with a strong memory(+): weighted by share,
    with the six memory metrics counted as one signal, limited processor holds the most profile mass
    (0.3 against 0.2, before the rescaling). Weighted by share alone, data skew's six words still win."""
    from stragglers.diagnosis.learners import (job_matrix, multiplicity, share_weighted, straggler_shares)
    X, y, _ = job_matrix(_mild_cpu_strong_memory_job())
    shares, mult = straggler_shares(X, y, 0.9), multiplicity(X)
    everything = np.sign(shares)          # a learner that keeps every word, with the stragglers' sign
    mass = _cause_mass(share_weighted(everything, shares, mult))
    assert max(mass, key=mass.get) == "limited_processor"
    assert mass["limited_processor"] / mass["data_skew"] == pytest.approx(0.3 / 0.2, rel=0.02)
    alone = _cause_mass(share_weighted(everything, shares))
    assert alone["data_skew"] / alone["limited_processor"] == pytest.approx(1.2 / 0.6)
    # a learner's word the stragglers do not show (CPU(+)) gets no weight; its zeros stay zeros
    learner = np.zeros(len(METRIC_COLUMNS))
    learner[METRIC_COLUMNS.index("mean_cpu")], learner[METRIC_COLUMNS.index("mean_mem")] = 0.7, 0.3
    w = share_weighted(learner, shares, mult)
    assert w[METRIC_COLUMNS.index("mean_cpu")] == 0.0 and w[METRIC_COLUMNS.index("mean_mem")] == pytest.approx(1.0)
    assert np.count_nonzero(w) == 1


def test_share_weighted_profiles_equal_the_learners_run_with_share_weights():
    import pandas as pd
    from stragglers.diagnosis.learners import profile_job
    from stragglers.diagnosis.run import share_weighted_profiles
    job = _mild_cpu_strong_memory_job()
    other = job.assign(job_id=8, latency_s=job.latency_s[::-1].to_numpy())
    inputs = pd.concat([job, other], ignore_index=True)
    fast = HoundSettings(replicas=3, adaboost_rounds=5)
    strength = pd.concat([profile_job(g, fast) for _, g in inputs.groupby("job_id")], ignore_index=True)
    share = pd.concat([profile_job(g, HoundSettings(replicas=3, adaboost_rounds=5, profile_weights="share"))
                       for _, g in inputs.groupby("job_id")], ignore_index=True)
    again = share_weighted_profiles(strength, inputs, HoundSettings(profile_weights="share"))
    pd.testing.assert_frame_equal(again.reset_index(drop=True), share.reset_index(drop=True), check_dtype=False)
    sums = share.assign(a=share.weight.abs()).groupby(["job_id", "learner"]).a.sum()
    assert all(np.isclose(v, 1.0) or v == 0.0 for v in sums)
    with pytest.raises(Exception, match="hound_profile_weights"):
        HoundSettings(profile_weights="shares")


# ----------------------------------------------------------------------------- Dagster: the Hound assets
def test_hound_assets_materialize_on_a_small_generated_trace(tmp_path):
    import dagster as dg
    import duckdb
    import pandas as pd
    from dagster_duckdb import DuckDBResource

    from assets import diagnosis, nodes, prediction, traces, warehouse
    from assets.resources import PipelineSettings
    from stragglers.diagnosis.truth import recall_by_cause
    from stragglers.warehouse.validation import validate_table

    data = tmp_path / "data"
    res = {"nurd": PipelineSettings(data_dir=str(data), synthetic_jobs=10, workers=1, n_boot=50,
                                hound_replicas=5, hound_adaboost_rounds=10, node_fit_sample=3),
           "duckdb": DuckDBResource(database=str(data / "warehouse.duckdb"))}
    chain = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks,
             warehouse.checkpoint_features, prediction.nurd_eval, nodes.task_attempts, nodes.node_ranking,
             *diagnosis.assets]
    result = dg.materialize(chain + diagnosis.checks, resources=res, instance=dg.DagsterInstance.ephemeral())
    assert result.success
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks == {f"{t}_valid": True for t in ("hound_profiles", "hound_topics", "hound_job_causes",
                                                   "hound_validation", "straggler_explanations")}
    with duckdb.connect(str(data / "warehouse.duckdb")) as con:
        q = lambda sql: con.execute(sql).df()  # noqa: E731
        n_jobs = q("SELECT count(DISTINCT job_id) AS n FROM hound_inputs").n[0]
        assert n_jobs == q("SELECT count(*) AS n FROM jobs").n[0]        # every selected job has >= 20 tasks
        # Hound's latency is end-to-end (Section 5, E10): first SUBMIT to final FINISH, straight from the events
        e2e = q("""SELECT h.latency_s, h.run_latency_s, h.sched_delay,
                          (max(e.time) FILTER (WHERE e.event_type = 4)
                           - min(e.time) FILTER (WHERE e.event_type = 0 AND e.time > 0)) / 1e6 AS direct_s
                   FROM hound_inputs h JOIN stg_task_events e ON e.job_id = h.job_id AND e.task_index = h.task_id
                   GROUP BY ALL""")
        known = e2e.sched_delay.notna()
        assert known.mean() > 0.9 and (e2e.sched_delay[known] > 0).any()
        assert np.allclose(e2e.latency_s[known], e2e.direct_s[known], atol=1e-6)
        assert np.allclose(e2e.latency_s[known], e2e.run_latency_s[known] + e2e.sched_delay[known])
        assert np.allclose(e2e.latency_s[~known], e2e.run_latency_s[~known])
        prof = q("SELECT job_id, learner, sum(abs(weight)) AS s FROM hound_profiles GROUP BY ALL")
        assert len(prof) == 3 * n_jobs and ((prof.s - 1).abs() < 1e-9).sum() >= 2 * n_jobs
        sums = q("SELECT job_id, sum(weight) AS s FROM hound_job_causes GROUP BY job_id")
        assert np.allclose(sums.s, 1.0)
        assert q("SELECT count(*) AS n FROM hound_validation").n[0] == n_jobs
        flagged = q("SELECT count(*) AS n FROM predictions WHERE method = 'nurd' AND flagged_at_s IS NOT NULL").n[0]
        assert q("SELECT count(*) AS n FROM straggler_explanations").n[0] == flagged > 0
        # the ground truth went beside the trace, not into it
        assert (data / "truth" / "synthetic" / "truth_jobs.parquet").exists()
        assert not list((data / "raw" / "synthetic").rglob("truth_*"))
        # the blocking check catches a mixture that does not sum to 1
        con.execute("UPDATE hound_job_causes SET weight = weight / 2 WHERE rank = 1")
        outcome = validate_table("hound_job_causes", con, "hound_job_causes", trace="synthetic")
        assert not outcome.success
        assert any(f.get("frame") == "sum" for f in outcome.failures)
    meta = result.asset_materializations_for_node("hound_validation")[0].metadata
    assert 0.0 <= meta["dominant_accuracy"].value <= 1.0 and "always_data_skew" in meta["summary"].value
    assert "limited_processor" in meta["recall_by_cause"].value or "data_skew" in meta["recall_by_cause"].value
    # beside Hound, hound_with_nodes from node_task_durations (node_ranking); Hound's own numbers unchanged
    assert 0.0 <= meta["hound_with_nodes_dominant_accuracy"].value <= 1.0
    assert "hound_with_nodes_dominant_accuracy_planted" in meta and "recall_by_cause_hound_with_nodes" in meta
    assert "stragglers have a machine in node_task_durations" in meta["node_evidence"].value
    # per cause, the hits add up to the dominant accuracy over the jobs the stragglers truth scores
    with duckdb.connect(str(data / "warehouse.duckdb"), read_only=True) as con:
        per_job = con.execute("SELECT * FROM hound_validation").df()
    rec = recall_by_cause(per_job)
    mine = rec[rec.truth == "stragglers"]
    assert mine.jobs.sum() == per_job.stragglers_dominant.notna().sum()
    assert mine.hound_hits.sum() / mine.jobs.sum() == pytest.approx(meta["dominant_accuracy"].value)
    assert "top_signal_accuracy" in result.asset_materializations_for_node("straggler_explanations")[0].metadata
    report = (data / "reports" / "hound.md").read_text()
    for section in ("Table 4", "Table 5", "Table 6", "Table 7", "hound_validation", "Figure 8", "Figure 9",
                    "Figure 10", "always_data_skew", "hound_hits", "hound_with_nodes"):
        assert section in report
    assert all((data / "reports" / f"hound_figure{i}.png").stat().st_size > 1000 for i in (8, 9, 10))


# ----------------------------------------------------------------------------- truth and explanations, by hand
def test_validation_scores_hand_computed():
    import pandas as pd
    from stragglers.diagnosis.truth import validate

    truth = pd.DataFrame({"job_id": [1, 2], "causes": ["data_skew:0.70;cache_misses:0.30", "limited_io:1.00"],
                          "causes_effective": ["cache_misses:0.50;data_skew:0.30;eviction:0.20",
                                               "limited_io:0.50;eviction:0.50"]})
    causes = pd.DataFrame({"job_id": [1, 1, 2], "cause": ["cache_misses", "data_skew", "data_skew"],
                           "named": [True] * 3, "weight": [0.6, 0.4, 1.0]})
    per_job, summary = validate(causes, truth, [1, 2])
    summary = summary.set_index(["truth", "method"])
    hound, base = summary.loc[("planted", "hound")], summary.loc[("planted", "always_data_skew")]
    # Hound: dominant cache_misses vs data_skew (wrong), data_skew vs limited_io (wrong) -> 0;
    # sets {cm, ds} vs {ds, cm}: 2 hits, {ds} vs {lio}: 0 -> precision 2/3, recall 2/3
    assert hound.dominant_accuracy == 0.0 and hound.precision == pytest.approx(2 / 3)
    assert hound.recall == pytest.approx(2 / 3)
    # always data skew: right on job 1 -> 1/2; precision 1/2; recall 1/3
    assert base.dominant_accuracy == 0.5 and base.precision == 0.5 and base.recall == pytest.approx(1 / 3)
    assert list(per_job.planted_dominant) == ["data_skew", "limited_io"]
    # effective truth: dominant cache_misses (hit), limited_io (tie with eviction; the first listed) vs
    # data_skew (miss) -> 1/2; sets {cm, ds} vs {cm, ds, ev}: 2, {ds} vs {lio, ev}: 0 -> precision 2/3,
    # recall 2/5; always data skew: dominant 0/2, precision 1/2, recall 1/5
    hound, base = summary.loc[("effective", "hound")], summary.loc[("effective", "always_data_skew")]
    assert hound.dominant_accuracy == 0.5 and hound.precision == pytest.approx(2 / 3)
    assert hound.recall == pytest.approx(2 / 5)
    assert base.dominant_accuracy == 0.0 and base.precision == 0.5 and base.recall == pytest.approx(1 / 5)
    assert list(per_job.effective_match) == [True, False]


def test_majority_accuracy_uses_hounds_definition_of_dominant():
    """Hound Section 5.1: a cause is dominant when it explains the majority (weight > 1/2) of a job's
    stragglers, and not every job has one; worked by hand."""
    import pandas as pd
    from stragglers.diagnosis.truth import majority, validate

    assert majority({"data_skew": 0.5, "eviction": 0.5}) is None and majority({"eviction": 0.51}) == "eviction"
    truth = pd.DataFrame({"job_id": [1, 2, 3],
                          "causes": ["data_skew:0.70;cache_misses:0.30", "limited_io:1.00",
                                     "eviction:0.60;data_skew:0.40"],
                          "causes_effective": ["data_skew:0.45;eviction:0.35;cache_misses:0.20",
                                               "limited_io:0.80;eviction:0.20", "eviction:0.70;data_skew:0.30"]})
    causes = pd.DataFrame({"job_id": [1, 1, 1, 2, 2, 3, 3],
                           "cause": ["data_skew", "cache_misses", "limited_processor", "limited_io", "eviction",
                                     "data_skew", "eviction"],
                           "named": [True] * 7, "weight": [0.45, 0.30, 0.25, 0.9, 0.1, 0.55, 0.45]})
    per_job, summary = validate(causes, truth, [1, 2, 3])
    s = summary.set_index(["truth", "method"])
    # Hound's majorities: none, limited_io, data_skew. Planted: data_skew, limited_io, eviction -> 1/3
    # (argmax: ds, lio, ds -> 2/3). Effective: none, limited_io, eviction -> 2/3 (none == none counts).
    assert list(per_job.diagnosed_majority) == [None, "limited_io", "data_skew"]
    assert s.loc[("planted", "hound")].majority_accuracy == pytest.approx(1 / 3)
    assert s.loc[("planted", "hound")].dominant_accuracy == pytest.approx(2 / 3)
    assert s.loc[("effective", "hound")].majority_accuracy == pytest.approx(2 / 3)
    assert list(per_job.effective_majority_match) == [True, True, False]
    # always data skew (weight 1): a majority on every job -> planted 1/3, effective 0 (argmax 1/3)
    assert s.loc[("planted", "always_data_skew")].majority_accuracy == pytest.approx(1 / 3)
    assert s.loc[("effective", "always_data_skew")].majority_accuracy == 0.0
    assert s.loc[("effective", "always_data_skew")].dominant_accuracy == pytest.approx(1 / 3)


def test_straggler_mixtures_hand_computed():
    """Hound's weights estimate the fraction of a job's stragglers attributed to each cause (Section 5.1);
    a cause explains a straggler when the task would not straggle had the cause taken its typical time."""
    import pandas as pd
    from stragglers.diagnosis.truth import cause_added_s, majority, recall_by_cause, straggler_mixtures, validate
    from stragglers.traces.synth.model import TYPICAL_SLOWDOWN

    # job 1: latencies 1..10 -> p90 = 9.1 -> straggler: task 9 (10 s, all of it its last attempt's work),
    # data skew with severity 1 -> added 10 * 1/2 = 5 s -> 5 <= 9.1, explained; it also lost 0.5 s to an
    # eviction -> 9.5 > 9.1, not explained by it. Task 10 did not finish (not an input).
    # job 2: latencies 1..20 -> p90 = 18.1 -> stragglers 18 (19 s) and 19 (20 s). Task 18 ran on a machine
    # twice the median slowdown -> limited processor added 19 * (1 - 1/2) = 9.5 s -> explained. Task 19
    # waited 5 s against the job's median 2 s -> queueing added 3 s -> 17 <= 18.1, explained; its machine
    # is faster than the median (added 0). Each explains 1/2: a tie, no majority; Table 7's order puts
    # limited processor first.
    lat = [float(x) for x in range(1, 11)] + [float(x) for x in range(1, 21)]
    tt = pd.DataFrame({"job_id": [1] * 11 + [2] * 20, "task_index": list(range(11)) + list(range(20)),
                       "cause": ["none"] * 9 + ["data_skew", "limited_io"] + ["none"] * 20,
                       "severity": [0.0] * 9 + [1.0, 0.5] + [0.0] * 20,
                       "machine_slowdown": [TYPICAL_SLOWDOWN] * 29 + [2 * TYPICAL_SLOWDOWN, 1.0],
                       "final_schedule_us": [0] * 31,
                       "final_finish_us": [int(x * 1e6) for x in lat[:10]] + [None] + [int(x * 1e6) for x in lat[10:]],
                       "evict_lost_s": [0.0] * 9 + [0.5] + [0.0] * 21, "slow_start_s": [0.0] * 31,
                       "background": [""] * 31})
    tt.loc[30, "final_finish_us"] = int(15e6)   # task 19: 5 s waited before its first SCHEDULE
    truth = pd.DataFrame({"job_id": [1, 2], "causes": ["data_skew:1.00", "limited_io:1.00"],
                          "causes_effective": ["data_skew:1.00", "limited_io:1.00"], "median_wait_s": [1.0, 2.0]})
    inputs = pd.DataFrame({"job_id": [1] * 10 + [2] * 20, "task_id": list(range(10)) + list(range(20)),
                           "latency_s": lat, "sched_delay": [0.0] * 29 + [5.0]})
    added = cause_added_s(tt, truth, inputs)
    assert added.set_index(["job_id", "task_id"]).loc[(2, 18), "limited_processor"] == pytest.approx(9.5)
    mix = straggler_mixtures(added)
    assert mix[1] == {"data_skew": 1.0}
    assert mix[2] == {"limited_processor": 0.5, "queueing_delay": 0.5} and majority(mix[2]) is None
    # scored as the third truth: Hound says data skew (job 1, right) and data skew (job 2, wrong)
    causes = pd.DataFrame({"job_id": [1, 2], "cause": ["data_skew"] * 2, "named": [True] * 2, "weight": [1.0] * 2})
    per_job, summary = validate(causes, truth, [1, 2], mix)
    row = summary.set_index(["truth", "method"]).loc[("stragglers", "hound")]
    assert row.dominant_accuracy == 0.5 and row.majority_accuracy == 0.5 and row.recall == pytest.approx(1 / 3)
    assert list(per_job.stragglers) == ["data_skew:1.00", "limited_processor:0.50;queueing_delay:0.50"]
    assert list(per_job.stragglers_match) == [True, False]
    # the best constant in hindsight: data skew and limited processor are each dominant once (a tie,
    # Table 7's order) -> data skew, 1/2
    best = summary.set_index(["truth", "method"]).loc[("stragglers", "best_constant_in_hindsight")]
    assert best.answers == "data_skew" and best.dominant_accuracy == 0.5
    # per cause: data skew is dominant in job 1 (Hound right: recall 1), limited processor (the tie's
    # first) in job 2 (Hound says data skew: recall 0); Hound answered data skew twice, right once
    rec = recall_by_cause(per_job).set_index(["truth", "cause"]).loc["stragglers"]
    assert list(rec.index) == ["data_skew", "limited_processor"]
    assert list(rec.recall) == [1.0, 0.0] and list(rec.answered) == [2, 0]
    assert rec.loc["data_skew"].precision == 0.5 and np.isnan(rec.loc["limited_processor"].precision)
    # flag + explain against the same truth: of the flagged tasks, (2, 18) and (2, 19) are explained
    # stragglers ({limited processor}, {queueing}); (1, 3) is no straggler (not scored). Top signals:
    # limited processor (right), data skew (wrong) -> 1/2
    from stragglers.diagnosis.explain import explanation_accuracy
    expl = pd.DataFrame({"job_id": [2, 2, 1], "task_id": [18, 19, 3],
                         "top_signal_cause": ["limited_processor", "data_skew", "eviction"],
                         "signal_causes": ["limited_processor", "data_skew,queueing_delay", "eviction"]})
    acc = explanation_accuracy(expl, tt, causes, added).set_index(["truth", "answer"]).loc["stragglers"]
    assert acc.loc["task's top signal"].accuracy == 0.5 and acc.loc["task's top signal"].with_cause == 2
    assert acc.loc["any of the task's top 3 signals"].accuracy == 1.0


def test_explanation_names_a_deviation_from_a_constant_reference():
    import pandas as pd
    from stragglers.diagnosis.explain import explain_job

    # the 4 finished tasks were never evicted (ev 0, 0, 0, 0: sd 0); flagged task 9 was evicted once and
    # deviates on memory by z = (3.5 - 2.5) / 1.118 = 0.9 only -> its top signal is EVICT(+) -> eviction;
    # task 8 equals the reference on ev (no signal there) -> its top signal is memory
    rows = [{"job_id": 7, "task_id": t, "k": 1, "checkpoint_s": 600.0, "is_finished": t < 4,
             "cmu": float(m), "ev": float(e)} for t, m, e in ((0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 4, 0),
                                                               (8, 5, 0), (9, 3.5, 1))]
    out = explain_job(pd.DataFrame({"task_id": [8, 9], "flagged_at_s": [600.0] * 2}), pd.DataFrame(rows), "")
    assert list(out.top_signal_cause) == ["data_skew", "eviction"]
    assert out.task_signals[1].startswith("EVICT(+) z=inf -> eviction; MEAN_MEM(+) z=0.9")
    assert out.task_signals[0] == "MEAN_MEM(+) z=2.2 -> data_skew"


def test_explanation_accuracy_counts_background_evictions_in_the_effective_truth():
    import pandas as pd
    from stragglers.diagnosis.explain import explanation_accuracy

    # job 1: task 0 planted data skew, top signal data skew; task 1 no planted cause but a background
    # eviction, top signal eviction; task 2 planted limited I/O with a background eviction, top signal
    # eviction; task 3 nothing (not scored)
    expl = pd.DataFrame({"job_id": [1] * 4, "task_id": [0, 1, 2, 3],
                         "top_signal_cause": ["data_skew", "eviction", "eviction", "cache_misses"],
                         "signal_causes": ["data_skew", "eviction,data_skew", "eviction", "cache_misses"]})
    truth = pd.DataFrame({"job_id": [1] * 4, "task_index": [0, 1, 2, 3],
                          "cause": ["data_skew", "none", "limited_io", "none"],
                          "background": ["", "eviction", "eviction;failure", "failure"]})
    causes = pd.DataFrame({"job_id": [1, 1], "cause": ["data_skew", "eviction"], "weight": [0.7, 0.3]})
    acc = explanation_accuracy(expl, truth, causes).set_index(["truth", "answer"])
    # planted: tasks 0 and 2 scored; top signal right on task 0 only -> 1/2; job dominant data skew 1/2
    assert acc.loc[("planted", "task's top signal")].accuracy == 0.5
    assert acc.loc[("planted", "task's top signal")].with_cause == 2
    assert acc.loc[("planted", "job's dominant Hound cause")].accuracy == 0.5
    # effective: tasks 0, 1, 2 scored ({ds}, {ev}, {lio, ev}); top signal right on all 3;
    # any of top 3: 3/3; job dominant data skew: 1/3; always data skew: 1/3
    eff = acc.loc["effective"]
    assert eff.loc["task's top signal"].accuracy == 1.0 and eff.loc["task's top signal"].with_cause == 3
    assert eff.loc["any of the task's top 3 signals"].accuracy == 1.0
    assert eff.loc["job's dominant Hound cause"].accuracy == pytest.approx(1 / 3)
    assert eff.loc["always data_skew"].accuracy == pytest.approx(1 / 3)


def test_explanation_names_the_deviating_metric():
    import pandas as pd
    from stragglers.diagnosis.explain import explain_job

    # at checkpoint 600 s, tasks 0-3 finished with memory 1..4 (median 2.5, sd 1.118) and CPU 1, 1, 1, 2;
    # task 9 (flagged) has memory 10 -> z = 6.7 -> MEAN_MEM(+) -> data skew
    rows = [{"job_id": 7, "task_id": t, "k": 1, "checkpoint_s": 600.0, "is_finished": t < 4,
             "cmu": float(m), "mcu": float(c)} for t, m, c in ((0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 4, 2), (9, 10, 1.25))]
    out = explain_job(pd.DataFrame({"task_id": [9], "flagged_at_s": [600.0]}), pd.DataFrame(rows), "data_skew:1.0")
    assert out.top_signal_cause[0] == "data_skew"
    assert out.task_signals[0].startswith("MEAN_MEM(+) z=6.7")
    # CPU: median 1, sd sqrt(0.1875) = 0.433 -> z = 0.25 / 0.433 = 0.58
    assert out.task_signals[0].endswith("MEAN_CPU(+) z=0.6 -> computation_skew")


def test_a_constant_metric_gets_no_weight_even_with_float_rounding():
    from stragglers.diagnosis.learners import standardize
    X, y = _driven(n=1456)
    X[:, 2] = 5.519e-05          # a job-wide request: its float std is 6.8e-21, not 0
    assert np.std(X[:, 2]) > 0 and np.all(standardize(X)[:, 2] == 0.0)
    for learner in (BaggedElasticNet(replicas=5), SignedSchweizerWolff(), AdaBoostIPW(rounds=5)):
        assert learner.profile(X, y)[2] == 0.0


def test_truth_from_an_older_generator_is_named(tmp_path):
    import pandas as pd
    from stragglers.diagnosis.truth import load_truth

    pd.DataFrame({"job_id": [1], "causes": ["data_skew:1.00"]}).to_parquet(tmp_path / "truth_jobs.parquet")
    pd.DataFrame({"job_id": [1], "task_index": [0], "cause": ["none"],
                  "background": [""]}).to_parquet(tmp_path / "truth_tasks.parquet")
    with pytest.raises(LookupError, match=r"truth_jobs.parquet has no column 'causes_effective'.*raw_trace"):
        load_truth(tmp_path)
    # truth version 3: no time each cause added (the counterfactual check needs it)
    pd.DataFrame({"job_id": [1], "causes": ["data_skew:1.00"], "causes_effective": ["data_skew:1.00"],
                  "median_wait_s": [1.0]}).to_parquet(tmp_path / "truth_jobs.parquet")
    with pytest.raises(LookupError, match=r"truth_tasks.parquet has no column 'final_schedule_us'.*raw_trace"):
        load_truth(tmp_path)
