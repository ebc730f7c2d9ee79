"""An evaluation as its asset shows it: Table 3 with intervals, F1 per job as a box plot, the run's
counts, settings and hyperparameters. Plain values, Markdown text (``Markdown``), links (``Url``),
paths and JSON-able dicts; the Dagster glue wraps them (assets/common.py ``as_metadata``)."""

from __future__ import annotations

import json
from typing import Sequence

import pandas as pd

from stragglers.prediction.replay.workers import peak_rss_mb
from stragglers.prediction.evaluation.run import EvaluationOutcome
from stragglers.settings.protocols import is_operator
from stragglers.reports.page.render import markdown_image, markdown_table
from stragglers.settings import EvaluationSettings
from stragglers.warehouse.freshness import Kept


class Markdown(str):
    """Text to show as Markdown."""


class Url(str):
    """An address to show as a link."""


def md_table(df: pd.DataFrame, floatfmt: str = ".3f", max_rows: int = 50) -> Markdown:
    return Markdown(markdown_table(df, floatfmt=floatfmt, max_rows=max_rows))


def summary_table(outcome: EvaluationOutcome) -> pd.DataFrame:
    s = outcome.summary
    rows = []
    for r in s.itertuples(index=False):
        row = {"method": r.method, "jobs": r.n_jobs}
        for m in ("tpr", "fpr", "fnr", "f1"):
            row[m.upper()] = f"{getattr(r, m):.3f} [{getattr(r, m + '_lo'):.3f}, {getattr(r, m + '_hi'):.3f}]"
        row["pooled F1"] = f"{r.pooled_f1:.3f} [{r.pooled_f1_lo:.3f}, {r.pooled_f1_hi:.3f}]"
        rows.append(row)
    return pd.DataFrame(rows)


def f1_plot(outcome: EvaluationOutcome) -> Markdown:
    """Per-job F1 of each method, as a Markdown image."""
    import matplotlib.pyplot as plt

    jm = outcome.frames["job_metrics"]
    methods = sorted(jm["method"].unique())
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.boxplot([jm.loc[jm.method == m, "f1"] for m in methods], tick_labels=methods, showmeans=True)
    ax.set_ylabel("F1 per job")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return Markdown(markdown_image(fig, "F1 per job"))


def outcome_summary(outcome: EvaluationOutcome, settings: dict) -> dict:
    """One evaluation run's metadata; ``settings``: what the run was configured with (recorded beside
    the feature set it resolved)."""
    fallbacks = outcome.frames["method_fallbacks"]
    jm = outcome.frames["job_metrics"]
    per_job = jm.groupby("method")["seconds"].mean().round(3).to_dict()
    meta = {
        "metrics": md_table(summary_table(outcome)),
        "f1_per_job": f1_plot(outcome),
        "n_jobs": outcome.n_jobs,
        "n_jobs_skipped": len(outcome.skipped),
        "fallback_checkpoints": len(fallbacks),
        "fallback_jobs": int(fallbacks["job_id"].nunique()) if len(fallbacks) else 0,
        "seconds": round(outcome.seconds, 2),
        "engine": outcome.replay.engine if outcome.replay else "",
        "batches": outcome.replay.n_batches if outcome.replay else 0,
        "jobs_per_second": round(outcome.n_jobs / max(outcome.replay.seconds, 1e-9), 3) if outcome.replay else 0.0,
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "seconds_per_job": per_job,
        "settings": settings | {"feature_set_resolved": outcome.feature_set},
        "hyperparameters": json.loads(json.dumps(outcome.hyperparameters, default=str)),
    }
    if len(fallbacks):
        reasons = fallbacks.groupby(["method", "reason"]).size().reset_index(name="checkpoints")
        meta["fallback_reasons"] = md_table(reasons.sort_values("checkpoints", ascending=False))
    if len(outcome.skipped):
        meta["skipped_jobs"] = md_table(outcome.skipped)
    return meta


def views_summary(views: Sequence[tuple[EvaluationSettings, Kept]], methods: Sequence[str], settings: dict) -> dict:
    """The metadata of an evaluation under its views (``evaluate_unless_current``): the first
    (configured) view's run, or that it was up to date; the other view's Table 3 under
    ``metrics_<view>`` when it ran."""
    meta = {}
    for i, (evaluation, kept) in enumerate(views):
        if not kept.rebuilt:
            if i == 0:
                meta = {"rebuilt": False, "methods": ", ".join(methods)}
        elif i == 0:
            meta = outcome_summary(kept.computed, settings) | {"rebuilt": True}
        else:
            meta[f"metrics_{'operator' if is_operator(evaluation) else 'paper'}"] = \
                md_table(summary_table(kept.computed))
    return meta
