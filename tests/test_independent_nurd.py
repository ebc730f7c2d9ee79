"""An independent implementation of docs/PROTOCOL.md's NURD, written from the text
(no stragglers.prediction.replay.simulate / stragglers.prediction.methods code), on the pipeline's own checkpoint_features,
agrees with the engine's `nurd` results."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from xgboost import XGBRegressor

from stragglers.prediction.evaluation.run import evaluate
from stragglers.settings import EvaluationSettings, SelectionSettings
from stragglers.trace_formats import GOOGLE_FEATURES
from stragglers.traces.synth import generate_google
from stragglers.warehouse.build import build_features, build_selection
from stragglers.warehouse.freshness import StaleTableError
from stragglers.warehouse.staging import stage_google


def independent_nurd(con, trace: str, alpha=0.5, eps=0.05, min_finished=20) -> dict[int, float]:
    """Per-job F1 of NURD, straight from docs/PROTOCOL.md sections 4-5."""
    f1 = {}
    cols = list(GOOGLE_FEATURES)
    feats = con.execute(f"SELECT job_id, task_id, k, checkpoint_s, {', '.join(cols)} FROM checkpoint_features "
                        "WHERE trace = ?", [trace]).df()
    tasks = con.execute("SELECT job_id, task_id, latency_s FROM tasks WHERE trace = ?", [trace]).df()
    for job_id, lat in tasks.groupby("job_id"):
        y = dict(zip(lat.task_id, lat.latency_s))
        if len(y) < min_finished:
            continue
        tau = float(np.quantile(list(y.values()), 0.9))
        jf = feats[feats.job_id == job_id]
        grid = sorted(jf.checkpoint_s.unique())
        if len(grid) < 2:
            continue
        t0 = grid[0]
        at = {t: g.set_index("task_id")[cols] for t, g in jf.groupby("checkpoint_s")}
        X0 = at[t0]
        fin0 = [i for i in X0.index if y[i] <= t0]
        run0 = [i for i in X0.index if y[i] > t0]
        c_f, c_r = X0.loc[fin0].mean().to_numpy(), X0.loc[run0].mean().to_numpy()
        rho = (c_f @ c_f) / ((c_r - c_f) @ (c_r - c_f))
        delta = 1 / (1 + rho) - alpha
        flagged = set()
        for t in grid[1:]:
            X = at[t]
            fin = [i for i in X.index if y[i] <= t]
            run = [i for i in X.index if y[i] > t]
            h = XGBRegressor(tree_method="hist", n_estimators=20, max_depth=3, learning_rate=0.5, max_bin=64,
                             n_jobs=1).fit(
                X.loc[fin].to_numpy(), np.array([y[i] for i in fin]))
            g = LogisticRegression(max_iter=1000).fit(X.loc[fin + run].to_numpy(), [1] * len(fin) + [0] * len(run))
            cand = [i for i in run if y[i] > t0 and i not in flagged]
            if not cand:
                continue
            Xc = X.loc[cand].to_numpy()
            w = np.clip(g.predict_proba(Xc)[:, 1] + delta, eps, 1.0)
            flagged |= {i for i, a in zip(cand, h.predict(Xc) / w) if a >= tau}
        scored = [i for i in y if y[i] > t0]
        tp = sum(1 for i in scored if i in flagged and y[i] >= tau)
        fp = sum(1 for i in scored if i in flagged and y[i] < tau)
        fn = sum(1 for i in scored if i not in flagged and y[i] >= tau)
        f1[job_id] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return f1


@pytest.mark.parametrize("mode", ["observed"])
def test_independent_nurd_agrees_with_engine(tmp_path, mode):
    generate_google(tmp_path / "raw", seed=31, n_jobs=12, n_parts=2)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    s = SelectionSettings(feature_mode=mode)
    stage_google(con, tmp_path / "raw", s)
    build_selection(con, s)
    build_features(con, s)
    outcome = evaluate(con, "synthetic", ["nurd"], EvaluationSettings(workers=1, n_boot=50))
    engine = outcome.frames["job_metrics"].query("method == 'nurd'").set_index("job_id")["f1"]
    mine = independent_nurd(con, "synthetic")
    assert sorted(mine) == sorted(engine.index.tolist()) and len(mine) >= 3
    assert abs(np.mean(list(mine.values())) - engine.mean()) <= 0.02


def test_quantile_mismatch_between_warehouse_and_evaluation_is_an_error(tmp_path):
    generate_google(tmp_path / "raw", seed=31, n_jobs=12, n_parts=2)
    con = duckdb.connect()
    s = SelectionSettings(quantile=0.9)
    stage_google(con, tmp_path / "raw", s)
    build_selection(con, s)
    build_features(con, s)
    # the domain names the table; the Dagster layer adds the asset to materialize (tests/test_faults.py)
    with pytest.raises(StaleTableError, match=r"built with other settings than this run's: quantile=0\.8 \(table "
                                              r"built with quantile=0\.9\)") as stale:
        evaluate(con, "synthetic", ["nurd"], EvaluationSettings(workers=1, quantile=0.8))
    assert stale.value.table == "checkpoint_features"
