"""The runs that attribute the authors' protocol's effect (stragglers.prediction.replay.protocol).

``protocol_ablation`` runs NURD (with NURD-NC and GBTR), the best baseline and
the reference rules under the preset, the preset with each setting switched
back one at a time, and this pipeline's protocol; ``nurd_sensitivity`` runs
NURD and the rules over alpha x the straggler quantile. Neither writes the
result tables of the main evaluation: they return summary rows (the assets
protocol_ablation and nurd_sensitivity write them). Above the evaluation and the
protocol's settings, both of which they use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import duckdb
import numpy as np
import pandas as pd

from stragglers import SQL_DIR
from stragglers.prediction.replay import protocol as protocol_module
from stragglers.prediction.replay.clock import grid_tables
from stragglers.prediction.replay.workers import replay_jobs
from stragglers.prediction.evaluation.run import load_jobs, method_factory
from stragglers.prediction.methods import REFERENCE_RULES
from stragglers.prediction.replay.protocol import adapt_jobs, warehouse_features
from stragglers.settings.protocols import AUTHORS, SELECTION_FIELDS, ours_value, with_settings
from stragglers.prediction.replay.simulate import results_frames
from stragglers.settings import EvaluationSettings, SelectionSettings
from stragglers.warehouse.freshness import digest, recorded_inputs


def run_variant(con: duckdb.DuckDBPyConnection, trace: str, evaluation: EvaluationSettings,
                selection: SelectionSettings, built_with: SelectionSettings, methods: Sequence[str],
                max_jobs: int | None = None) -> pd.DataFrame:
    """Per-job metrics of ``methods`` under these settings (nothing is written)."""
    with warehouse_features(con, selection, built_with):
        jobs, _ = load_jobs(con, trace, evaluation)
    jobs = adapt_jobs(con, trace, jobs[:max_jobs] if max_jobs else jobs, evaluation)
    factories = [method_factory(m, evaluation) for m in methods]
    results = replay_jobs(jobs, factories, seed=evaluation.seed, workers=evaluation.workers)
    return results_frames(results, trace)["job_metrics"]


def _summary(jm: pd.DataFrame) -> pd.DataFrame:
    return (jm.groupby("method", sort=False)
            .agg(n_jobs=("job_id", "nunique"), f1=("f1", "mean"), tpr=("tpr", "mean"), fpr=("fpr", "mean"),
                 f1_auc=("f1_auc", "mean"), median_lead=("median_lead", "mean"))
            .reset_index())


def ablation_variants() -> list[tuple[str, dict[str, object]]]:
    """(label, settings): the authors' preset, the preset with each setting switched back, ours."""
    out = [("authors", dict(AUTHORS))]
    for name in AUTHORS:
        out.append((f"authors, {name}={ours_value(name)}", AUTHORS | {name: ours_value(name)}))
    out.append(("ours", {name: ours_value(name) for name in AUTHORS}))
    return out


def protocol_ablation(con: duckdb.DuckDBPyConnection, trace: str, evaluation: EvaluationSettings,
                      selection: SelectionSettings, best_baseline: str, max_jobs: int | None = None,
                      progress: Callable[[str], None] | None = None,
                      methods: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows: trace, variant, method, n_jobs, f1, tpr, fpr, f1_auc, median_lead, settings (JSON).

    ``methods`` defaults to NURD (with NURD-NC and GBTR), ``best_baseline`` and the reference rules.
    Variants that share a feature construction share one build of the features.
    """
    methods = list(methods or ["nurd", best_baseline, *REFERENCE_RULES])
    variants = []
    for label, values in ablation_variants():
        ev, sel = with_settings(evaluation, selection, values)
        variants.append((label, ev, sel))
    rows: dict[str, pd.DataFrame] = {}
    for key in dict.fromkeys((sel.feature_mode, sel.quantile) for _, _, sel in variants):
        group = [v for v in variants if (v[2].feature_mode, v[2].quantile) == key]
        with warehouse_features(con, group[0][2], selection):
            for label, ev, sel in group:
                if progress:
                    progress(label)
                jm = run_variant(con, trace, ev, sel, sel, methods, max_jobs)
                recorded = {k: (getattr(sel, k) if k in SELECTION_FIELDS else getattr(ev, k)) for k in AUTHORS}
                recorded |= {"seed": ev.seed, "quantile": ev.quantile, "max_jobs": max_jobs}
                rows[label] = _summary(jm).assign(variant=label, settings=json.dumps(recorded, sort_keys=True))
    out = pd.concat([rows[label] for label, _, _ in variants], ignore_index=True).assign(trace=trace)
    return out[["trace", "variant", "method", "n_jobs", "f1", "tpr", "fpr", "f1_auc", "median_lead", "settings"]]


def nurd_sensitivity(con: duckdb.DuckDBPyConnection, trace: str, evaluation: EvaluationSettings,
                     selection: SelectionSettings, alphas: Sequence[float] = (0.0, 0.25, 0.5),
                     quantiles: Sequence[float] = (0.7, 0.8, 0.9, 0.95), max_jobs: int | None = None,
                     progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Rows: method, alpha (NaN for the rules), quantile, n_jobs, f1, f1_auc, ... under ``evaluation``."""
    rows = []
    for q in quantiles:
        ev_q, sel_q = evaluation.replace(quantile=q), selection.replace(quantile=q)
        with warehouse_features(con, sel_q, selection):        # one build of the features per quantile
            for i, a in enumerate(alphas):
                if progress:
                    progress(f"quantile {q}, alpha {a}")
                methods = ["nurd", *REFERENCE_RULES] if i == 0 else ["nurd"]   # the rules have no alpha
                jm = run_variant(con, trace, ev_q.replace(alpha=a), sel_q, sel_q, methods, max_jobs)
                jm = jm[jm["method"].isin(["nurd", *REFERENCE_RULES])]
                s = _summary(jm)
                s["alpha"] = np.where(s["method"] == "nurd", a, np.nan)
                rows.append(s.assign(quantile=q))
    out = pd.concat(rows, ignore_index=True).assign(trace=trace)
    return out[["trace", "method", "alpha", "quantile", "n_jobs", "f1", "tpr", "fpr", "f1_auc", "median_lead"]]


def _code_version() -> str:
    """This module, the protocol's presets and the SQL files: the variants and the features they are
    built from (a change re-runs the ablations, as a method's changed hyperparameters re-run its
    evaluation)."""
    return digest([Path(__file__).read_text(), Path(protocol_module.__file__).read_text(),
                   [[p.name, p.read_text()] for p in sorted(SQL_DIR.glob("*.sql"))]])


def _inputs(con: duckdb.DuckDBPyConnection, trace: str, evaluation: EvaluationSettings,
            selection: SelectionSettings, max_jobs: int | None, extra) -> str:
    settings = {k: v for k, v in evaluation.as_dict().items() if k != "workers"}  # results do not depend on it
    built = [recorded_inputs(con, t, trace) for t in ("staged_trace", "tasks", grid_tables(evaluation)[1])]
    return digest([built, settings, selection.as_dict(), max_jobs, _code_version(), extra])


def ablation_inputs(con: duckdb.DuckDBPyConnection, trace: str, evaluation: EvaluationSettings,
                    selection: SelectionSettings, best_baseline: str, max_jobs: int | None = None) -> str:
    """What ``protocol_ablation``'s rows are computed from: the staged trace and the tables built from
    it (their inputs digests), the settings, the best baseline, every method's hyperparameters under
    every variant, and the code (``_code_version``)."""
    methods = ["nurd", best_baseline, *REFERENCE_RULES]
    hyper = []
    for label, values in ablation_variants():
        ev, _ = with_settings(evaluation, selection, values)
        hyper.append([label, [method_factory(m, ev)().hyperparameters() for m in methods]])
    return _inputs(con, trace, evaluation, selection, max_jobs, [best_baseline, hyper])


def sensitivity_inputs(con: duckdb.DuckDBPyConnection, trace: str, evaluation: EvaluationSettings,
                       selection: SelectionSettings, max_jobs: int | None = None) -> str:
    """What ``nurd_sensitivity``'s rows are computed from (as ``ablation_inputs``; its grid is code)."""
    hyper = [method_factory(m, evaluation)().hyperparameters() for m in ["nurd", *REFERENCE_RULES]]
    return _inputs(con, trace, evaluation, selection, max_jobs, hyper)
