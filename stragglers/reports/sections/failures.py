"""Failure-prediction and proactive-cloning report beside El-Sayed, Zhu, Schroeder
(ICDCS 2017), written under ``<reports>/failures/`` (markdown, CSV, PNG)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.failures.predict import SCENARIOS, TARGETS
from stragglers.reports.page.files import legend, md, pyplot, save_figure, write_text

# Table V: overhead on the entire workload (threshold x extra clones).
PAPER_TABLE_V = pd.DataFrame({"threshold": [0.1, 0.5, 0.9, 0.95, 0.99],
                              "paper_1_clone": [0.3880, 0.1082, 0.0352, 0.0289, 0.0112],
                              "paper_2_clones": [0.7484, 0.2111, 0.0692, 0.0566, 0.0209],
                              "paper_3_clones": [1.0833, 0.3032, 0.0973, 0.0797, 0.0281]})
CDF_THRESHOLDS = (0.1, 0.5, 0.9)


def _best(curves: pd.DataFrame, target: str, scenario: str, maximize: str, where: str, bound: float) -> float:
    c = curves[(curves.target == target) & (curves.scenario == scenario) & (curves.sampling_ratio == 0)
               & curves.available.astype(bool)]
    c = c[c[where] >= bound] if where == "precision" else c[c[where] > bound]
    return float(c[maximize].max()) if len(c) else float("nan")


def headline(curves: pd.DataFrame, cloning: dict | None) -> pd.DataFrame:
    """Each headline number of the paper next to ours (Section V-C, VI-B)."""
    rows = [
        ("job failure, config only: best precision with recall > 50%", 0.795,
         _best(curves, "job_failure", "config", "precision", "recall", 0.5)),
        ("job failure, config + TaskFailFlag: best recall with precision >= 95%", 0.94,
         _best(curves, "job_failure", "config+flag", "recall", "precision", 0.95)),
        ("job kill, config only: best recall with precision >= 95% (paper: 'very accurately', Fig. 7)", np.nan,
         _best(curves, "job_kill", "config", "recall", "precision", 0.95)),
    ]
    if cloning is not None:
        t = cloning["tasks"]
        f = t[(t.threshold == 0.9) & (t.clones == 1) & t.had_failed_attempt & t.final_failed]
        rows.append(("cloning, threshold 0.9, 1 clone: median reduction of failed tasks' completion time", 0.20,
                     float(1 - f.relative_completion.median()) if len(f) else np.nan))
        ov = cloning["overhead"]
        o = ov[(ov.threshold == 0.9) & (ov.clones == 1)]["overhead"]
        rows.append(("cloning, threshold 0.9, 1 clone: overhead on the workload (Table V)", 0.0352,
                     float(o.iloc[0]) if len(o) else np.nan))
    return pd.DataFrame(rows, columns=["figure", "paper", "ours"])


def write_prediction_report(out: Path, trace: str, result: dict, settings: dict) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    plt = pyplot()
    curves, imp, summary = result["curves"], result["importances"], result["summary"]
    figs = {}
    avail = curves[curves.available.astype(bool)] if len(curves) else curves
    for kind, xcol, sel in (("threshold", "threshold", avail.get("sampling_ratio", pd.Series(dtype=float)) == 0),
                            ("sampling_ratio", "sampling_ratio", avail.get("threshold", pd.Series(dtype=float)) == 0.5)):
        if not len(avail):
            break
        fig, axes = plt.subplots(2, len(TARGETS), figsize=(4 * len(TARGETS), 6), sharey=True)
        for j, target in enumerate(TARGETS):
            for i, metric in enumerate(("precision", "recall")):
                ax = axes[i, j]
                for scenario in SCENARIOS:
                    c = avail[sel & (avail.target == target.name) & (avail.scenario == scenario)].sort_values(xcol)
                    if len(c):
                        ax.plot(c[xcol], c[metric], marker="o", ms=3, label=scenario)
                ax.set_title(f"{target.name}: {metric}", fontsize=9)
                ax.set_xlabel(xcol.replace("_", " "), fontsize=8)
                ax.set_ylim(-0.02, 1.02)
        legend(axes[0, 0], fontsize=7)
        fig.suptitle(f"{trace}: random forests (50 trees) varying the {xcol.replace('_', ' ')} (paper Figs. 7, 8, 10)",
                     fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 0.95))
        figs[kind] = save_figure(fig, out / f"failures_{trace}_{kind}.png")
    top = (imp[imp.scenario == "config"].sort_values("importance", ascending=False).groupby("target").head(5)
           if len(imp) else imp)
    text = [f"# Failure and kill prediction on `{trace}` (El-Sayed, Zhu, Schroeder, ICDCS 2017)", "",
            f"Settings: {settings}.", "", "## Rows (70/30 split by job; outcome unknown = still running)", "",
            md(summary), "", "## Beside the paper", "", md(headline(curves, None)), "",
            "## Precision and recall, threshold 0.1-0.9 (training set as it is)", ""]
    if len(curves):
        base = curves[(curves.get("sampling_ratio") == 0) | ~curves.available.astype(bool)]
        piv = base[base.available.astype(bool)].pivot_table(index=["target", "scenario"], columns="threshold",
                                                             values=["precision", "recall"]).round(3)
        piv.columns = [f"{m}@{t}" for m, t in piv.columns]
        text += [md(piv.reset_index()), ""]
        na = curves[~curves.available.astype(bool)].reindex(columns=["target", "scenario", "note"])
        if len(na):
            text += ["Scenarios not available on this trace (reported, not faked):", "", md(na), ""]
        ratio = avail[avail.threshold == 0.5][["target", "scenario", "sampling_ratio", "precision", "recall",
                                               "train_rows_used"]]
        text += ["## Sampling ratio (positives per negative after oversampling; 0 = as is), threshold 0.5", "",
                 md(ratio), ""]
    text += ["## Top feature importances (config only)", "", md(top), ""]
    text += [f"![{k}]({p.name})" for k, p in figs.items()]
    for name in ("curves", "importances", "summary"):
        result[name].to_csv(out / f"failures_{trace}_{name}.csv", index=False)
    report = write_text(out / f"failures_{trace}_prediction.md", "\n".join(text) + "\n")
    return {"report": report, "figures": figs, "tables": {"summary": summary, "headline": headline(curves, None)}}


def write_cloning_report(out: Path, trace: str, result: dict, settings: dict, curves: pd.DataFrame | None) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    plt = pyplot()
    t, ov = result["tasks"], result["overhead"]
    figs = {}
    failed = t[t.had_failed_attempt]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    panels = (("(a) tasks that finally fail", failed[failed.final_failed & (failed.clones == 1)], "threshold"),
              ("(b) tasks that finally succeed", failed[~failed.final_failed & (failed.clones == 1)], "threshold"),
              ("(c) threshold 0.9, 1-3 clones", failed[failed.threshold == 0.9], "clones"))
    for ax, (title, d, by) in zip(axes, panels):
        for key, g in d.groupby(by):
            if by == "threshold" and key not in CDF_THRESHOLDS:
                continue
            x = np.sort(g.relative_completion.to_numpy())
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=f"{by} {key} (n={len(x)})")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("completion time / original")
        legend(ax, fontsize=7)
    axes[0].set_ylabel("CDF")
    fig.suptitle(f"{trace}: proactive cloning (Algorithm 1, R={settings.get('clone_retries')}) (paper Fig. 11)",
                 fontsize=10)
    figs["cdf"] = save_figure(fig, out / f"failures_{trace}_cloning_cdf.png")
    table_v = ov.pivot(index="threshold", columns="clones", values="overhead")
    table_v.columns = [f"ours_{c}_clone{'s' if c > 1 else ''}" for c in table_v.columns]
    table_v = table_v.reset_index().merge(PAPER_TABLE_V, on="threshold", how="left")
    med = (failed.groupby(["threshold", "clones", "final_failed"]).relative_completion.median()
           .rename("median_relative_completion").reset_index())
    head = headline(curves if curves is not None else pd.DataFrame(
        columns=["target", "scenario", "sampling_ratio", "available", "precision", "recall"]), result)
    text = [f"# Proactive cloning on `{trace}` (El-Sayed et al., Section VI-B, Algorithm 1)", "",
            f"Settings: {settings}.", "", md(result["info"]), "", "Tasks by replay eligibility:", "",
            md(result["reasons"]), "", "## Beside the paper", "", md(head), "",
            "## Table V: overhead on the entire workload (extra attempt time / the trace's)", "", md(table_v, ".4f"), "",
            "## Median completion time relative to the trace (tasks with >= 1 failed attempt)", "", md(med), "",
            f"![cdf]({figs['cdf'].name})"]
    for name, df in (("cloning_overhead", table_v), ("cloning_medians", med)):
        df.to_csv(out / f"failures_{trace}_{name}.csv", index=False)
    report = write_text(out / f"failures_{trace}_cloning.md", "\n".join(text) + "\n")
    return {"report": report, "figures": figs, "tables": {"table_v": table_v, "medians": med, "headline": head,
                                                          "eligibility": result["reasons"]}}
