"""The comparison with the paper, rendered from warehouse tables.

Plain pandas in, files out (no Dagster, no DuckDB here):

- ``table3``: the paper's Table 3 for our runs: per (trace, method) mean
  TPR / FPR / FNR / F1 over jobs with 95% bootstrap intervals over jobs, the
  pooled (micro) figures when the confusion counts are there, and the best
  F1 per trace.
- ``PAPER_TABLE3`` and ``compare_with_paper`` (from ``paper.py``): the paper's numbers
  (docs/PAPER_NUMBERS.md) beside ours, with the difference, for ``google_2011`` and the
  Alibaba traces.
- ``f1_over_time_table`` / ``plot_f1_over_time``: Figures 2-3.
- ``completion_summary`` / ``plot_completion_*``: Figures 4-9 (input is
  ``stragglers.prediction.completion.completion_table``).
- ``write_report``: tables as CSV + Parquet, plots as PNG, one ``report.md``,
  published atomically (written to a temporary sibling directory, then
  swapped in by rename).

Decisions:
- Bootstrap: percentile intervals, ``n_boot`` resamples of the jobs of each
  (trace, method) with replacement. The generator for a group is
  ``default_rng([seed, crc32(trace), crc32(method)])``, so a group's interval
  does not change when other methods or traces are added.
- Metrics undefined for a job (NaN, e.g. FPR of a job with no negatives)
  are left out of that metric's mean (``nanmean``), as in the mean itself.
- Pooled figures: tpr = sum tp / (sum tp + sum fn), fpr = sum fp / (sum fp +
  sum tn), fnr = 1 - tpr, f1 = 2 sum tp / (2 sum tp + sum fp + sum fn),
  columns ``pooled_<m>`` with the same
  bootstrap over jobs.
- ``best_f1`` marks the largest mean F1 per trace (every method on a tie).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
import tempfile
import uuid
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from stragglers.prediction.methods import VARIANTS
from stragglers.prediction.metrics import EARLINESS, RATES as METRICS, method_sort_key, rates, table3  # noqa: F401
from stragglers.prediction.metrics import sort_by_method as _sort
from stragglers.reports import budgets as budget_report
from stragglers.reports import figures, operator, reexecution, story, views
from stragglers.reports.html import render_html
from stragglers.reports.paper import PAPER_COMPLETION, PAPER_TABLE3, PAPER_TRACE, compare_with_paper
from stragglers.reports.render import markdown_table
from stragglers.reports.style import display_name, is_reference_rule, style_for


# Registry names in table order: the reference rules, the baselines, NURD and its ablations.
METHOD_ORDER = tuple(VARIANTS)


# ---------------------------------------------------------------------------
# Table 3
# ---------------------------------------------------------------------------

def table3_markdown_frame(t3: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """A compact view for the report: 'mean [lo, hi]' per metric, paper beside."""
    rows = []
    for _, r in t3.iterrows():
        row = {"trace": r["trace"], "method": r["method"], "n_jobs": r["n_jobs"]}
        for m in METRICS:
            row[m.upper()] = _fmt_ci(r[m], r.get(f"{m}_lo"), r.get(f"{m}_hi"), digits)
        if "pooled_f1" in r:
            row["F1 pooled"] = _fmt_ci(r["pooled_f1"], r.get("pooled_f1_lo"), r.get("pooled_f1_hi"), digits)
        if "paper_f1" in r and pd.notna(r.get("paper_f1")):
            row["paper T/F/F/F1"] = "/".join(f"{r[f'paper_{m}']:.2f}" for m in METRICS)
            row["F1 - paper"] = f"{r['f1_diff']:+.{digits}f}"
        row["best"] = "**best**" if r.get("best_f1") else ""
        rows.append(row)
    return pd.DataFrame(rows)


def _fmt_ci(v, lo, hi, digits) -> str:
    if v is None or pd.isna(v):
        return ""
    if lo is None or pd.isna(lo):
        return f"{v:.{digits}f}"
    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


# ---------------------------------------------------------------------------
# F1 over time (Figures 2-3)
# ---------------------------------------------------------------------------

def f1_over_time_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean F1 over jobs per (trace, method, k); columns trace, method, k, f1, n_jobs."""
    need = {"trace", "method", "job_id", "k", "f1"}
    if not need <= set(df.columns):
        raise ValueError(f"needs columns {sorted(need)}")
    out = (
        df.groupby(["trace", "method", "k"], sort=False)
        .agg(f1=("f1", "mean"), n_jobs=("job_id", "nunique"))
        .reset_index()
    )
    out["k"] = out["k"].astype(int)
    return _sort(out, ["trace", "method", "k"])


def plot_f1_over_time(table: pd.DataFrame, path) -> Path:
    """Mean F1 against normalized time k/10, small multiples (stragglers.reports.figures)."""
    return figures.small_multiples(
        table.assign(t=table["k"] / 10), "t", "f1", path, label=display_name, ylim=(0, 1),
        xlabel="normalized time t = k/10 of [t0, tau] (fraction)",
        ylabel="F1 of flags raised so far (mean over jobs, 0-1)", title="F1 over time (Figures 2-3)")


# ---------------------------------------------------------------------------
# Job completion time (Figures 4-9)
# ---------------------------------------------------------------------------

def completion_summary(completion_df: pd.DataFrame) -> pd.DataFrame:
    """Per (trace, method): unlimited reduction and the mean over machine counts.

    Columns: trace, method, unlimited, unlimited_std, limited_avg (mean of
    the limited rows' reduction_mean over machine counts), limited_min_machines,
    limited_max_machines, best_unlimited, best_limited_avg, and the paper's
    NURD figures for google_2011 / Alibaba traces (paper_nurd_unlimited,
    paper_nurd_limited_avg).
    """
    c = completion_df
    unl = c[c["algorithm"] == "unlimited"].set_index(["trace", "method"])
    lim = c[c["algorithm"] == "limited"].groupby(["trace", "method"]).agg(
        limited_avg=("reduction_mean", "mean"),
        limited_min_machines=("machines", "min"),
        limited_max_machines=("machines", "max"),
    )
    out = pd.DataFrame({
        "unlimited": unl["reduction_mean"],
        "unlimited_std": unl["reduction_std_over_seeds"],
        "n_jobs": unl["n_jobs"],
    }).join(lim, how="outer").reset_index()
    for col in ("unlimited", "limited_avg"):
        best = out.groupby("trace")[col].transform("max")
        out[f"best_{col}"] = (out[col] == best) & out[col].notna()
    pt = out["trace"].map(PAPER_TRACE)
    pc = PAPER_COMPLETION.set_index(["paper_trace", "algorithm"])["nurd_reduction"]
    out["paper_nurd_unlimited"] = [pc.get((p, "unlimited"), np.nan) if isinstance(p, str) else np.nan for p in pt]
    out["paper_nurd_limited_avg"] = [pc.get((p, "limited_avg"), np.nan) if isinstance(p, str) else np.nan for p in pt]
    return _sort(out, ["trace", "method"])


def _paper_nurd(algorithm: str) -> dict[str, float]:
    pc = PAPER_COMPLETION.set_index(["paper_trace", "algorithm"])["nurd_reduction"]
    return {t: float(pc[(p, algorithm)]) for t, p in PAPER_TRACE.items() if (p, algorithm) in pc}


def plot_completion_unlimited(completion_df: pd.DataFrame, path) -> Path:
    """Bar per method, Algorithm 2 (Figures 4-5); error bars: std over seeds."""
    sub = completion_df[completion_df["algorithm"] == "unlimited"]
    return figures.method_bars(sub, "reduction_mean", "reduction_std_over_seeds", path, label=display_name,
                               xlabel="reduction in job completion time (%, mean over jobs and seeds)",
                               title="Unlimited machines (Algorithm 2)", paper=_paper_nurd("unlimited"))


def plot_completion_limited_avg(completion_df: pd.DataFrame, path) -> Path:
    """Bar per method, Algorithm 3 averaged over machine counts (Figures 8-9)."""
    s = completion_summary(completion_df)
    return figures.method_bars(s, "limited_avg", None, path, label=display_name,
                               xlabel="reduction in job completion time (%, mean over machine counts)",
                               title="Limited machines, averaged (Algorithm 3)",
                               paper=_paper_nurd("limited_avg"))


def plot_completion_limited(completion_df: pd.DataFrame, path) -> Path:
    """Reduction against the number of machines, small multiples (Figures 6-7)."""
    sub = completion_df[completion_df["algorithm"] == "limited"]
    return figures.small_multiples(sub, "machines", "reduction_mean", path, label=display_name, y_scale=100,
                                   xlabel="machines available to the job (count)",
                                   ylabel="reduction in job completion time (%)",
                                   title="Completion time with limited machines (Figures 6-7)")


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def write_report(out_dir, tables: Mapping[str, pd.DataFrame], plots: Mapping[str, object],
                 *, title: str = "Straggler prediction: comparison with NURD (MLSys 2022)",
                 notes: str | None = None, markdown_tables: Mapping[str, pd.DataFrame] | None = None,
                 max_md_rows: int = 500, summary: str | None = None,
                 captions: Mapping[str, tuple[str, str]] | None = None,
                 figures_after: Mapping[str, list[str]] | None = None) -> Path:
    """Write ``<name>.csv`` and ``<name>.parquet`` per table, ``<name>.png`` per
    plot (a path to an existing PNG, or a matplotlib Figure), and ``report.md``
    linking them and embedding each table as Markdown (``markdown_tables[name]``
    instead of the table itself when given, e.g. a formatted view; at most
    ``max_md_rows`` rows). Everything is written to a temporary sibling
    directory that then replaces ``out_dir`` by rename, so a reader never sees
    a half-written report. ``summary`` opens the report ("What this run
    shows"); ``captions`` maps a table name, or "fig:" + a plot name, to its
    (heading, caption); ``figures_after`` places plots right after a table
    (the others go under "Figures"). ``report.html`` (self-contained, see
    ``stragglers.reports.html``) is published with report.md. Returns the
    path of report.md.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        md = [f"# {title}", ""]
        if notes:
            md += [notes.strip(), ""]
        if summary:
            md += ["## What this run shows", "", summary.strip(), ""]
        captions = captions or {}
        placed = {p for names in (figures_after or {}).values() for p in names}

        def figure(name: str, plot) -> list[str]:
            _check_name(name)
            dest = tmp / f"{name}.png"
            if hasattr(plot, "savefig"):
                plot.savefig(dest, dpi=110, bbox_inches="tight", format="png")
            else:
                shutil.copyfile(Path(plot), dest)
            heading, caption = captions.get(f"fig:{name}", (name, ""))
            return [f"### {heading}", "", f"![{heading}]({name}.png)", "",
                    *([f"> {caption}", ""] if caption else [])]

        for name, df in tables.items():
            _check_name(name)
            df.to_csv(tmp / f"{name}.csv", index=False)
            df.to_parquet(tmp / f"{name}.parquet", index=False)
            view = (markdown_tables or {}).get(name, df)
            heading, caption = captions.get(name, (name, ""))
            md += [f"## {heading}", "", *([f"> {caption}", ""] if caption else []),
                   f"Files: [{name}.csv]({name}.csv), [{name}.parquet]({name}.parquet)"
                   f" ({len(df)} rows)", ""]
            if len(view) > max_md_rows:
                md += [f"First {max_md_rows} of {len(view)} rows:", ""]
                view = view.head(max_md_rows)
            md += [markdown_table(view, numparse=name not in (markdown_tables or {})), ""]
            for p in (figures_after or {}).get(name, []):
                if p in plots:
                    md += figure(p, plots[p])
        rest = [n for n in plots if n not in placed]
        if rest:
            md += ["## Figures", ""]
        for name in rest:
            md += figure(name, plots[name])
        (tmp / "report.md").write_text("\n".join(md), encoding="utf-8")
        render_html(tmp / "report.md")
        os.chmod(tmp, 0o755)
        _swap_in(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir / "report.md"


def _check_name(name: str) -> None:
    if not name or "/" in name or "\\" in name or name.startswith(".") or name == "report":
        raise ValueError(f"bad table/plot name: {name!r}")


def _swap_in(tmp: Path, out_dir: Path) -> None:
    """Replace out_dir by tmp: the old report stays whole until the new one is in place."""
    if out_dir.exists():
        old = out_dir.parent / f".{out_dir.name}.old-{uuid.uuid4().hex[:8]}"
        os.rename(out_dir, old)
        try:
            os.rename(tmp, out_dir)
        except BaseException:
            os.rename(old, out_dir)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, out_dir)


@dataclass
class Report:
    """What ``build_report`` made: report.md (report.html beside it), its tables and its plots."""

    path: Path
    tables: dict[str, pd.DataFrame]
    plots: dict[str, Path]


def with_completion(t3: pd.DataFrame, completion_df: pd.DataFrame | None) -> pd.DataFrame:
    """Table 3 with each method's completion-time reduction (Algorithm 2; Algorithm 3 averaged
    over machine counts) as columns ``completion_unlimited`` and ``completion_limited_avg``."""
    if completion_df is None or completion_df.empty:
        return t3.assign(completion_unlimited=np.nan, completion_limited_avg=np.nan)
    cs = completion_summary(completion_df)[["trace", "method", "unlimited", "limited_avg"]].rename(
        columns={"unlimited": "completion_unlimited", "limited_avg": "completion_limited_avg"})
    return t3.merge(cs, on=["trace", "method"], how="left")


def ranking_note(t3: pd.DataFrame) -> str:
    """One paragraph per trace: how the ranking by f1_auc differs from the ranking by F1."""
    if "f1_auc" not in t3:
        return ""
    out = []
    for trace, g in t3.groupby("trace", sort=True):
        g = g.dropna(subset=["f1", "f1_auc"])
        if len(g) < 2:
            continue
        by_f1 = g.sort_values("f1", ascending=False, kind="mergesort")
        by_auc = g.sort_values("f1_auc", ascending=False, kind="mergesort")
        rank_f1 = {m: i + 1 for i, m in enumerate(by_f1["method"])}
        rank_auc = {m: i + 1 for i, m in enumerate(by_auc["method"])}
        rho = float(pd.Series(rank_f1).corr(pd.Series(rank_auc), method="spearman"))
        moves = sorted(rank_f1, key=lambda m: -abs(rank_f1[m] - rank_auc[m]))[:3]

        def top(df, col):
            return ", ".join(f"{display_name(m)} {v:.2f}" for m, v in zip(df["method"][:3], df[col][:3]))
        out.append(
            f"**{trace}**: by final F1 the top three are {top(by_f1, 'f1')}; by f1_auc (F1 averaged over "
            f"normalized time) they are {top(by_auc, 'f1_auc')}. Spearman correlation of the two rankings over "
            f"{len(g)} methods: {rho:.2f}. Largest moves (rank by F1 -> rank by f1_auc): "
            + "; ".join(f"{display_name(m)} {rank_f1[m]} -> {rank_auc[m]}" for m in moves) + ".")
    return "\n\n".join(out)


def earliness_view(t3: pd.DataFrame) -> pd.DataFrame:
    """Accuracy beside earliness and completion time, per method (the columns Table 3 adds)."""
    cols = {"f1": "F1 (0-1)", "f1_auc": "f1_auc (0-1)", "median_lead": "median lead (share of tau)",
            "completion_unlimited": "jobs' completion time, Alg. 2",
            "completion_limited_avg": "jobs' completion time, Alg. 3"}
    out = t3[["trace", "method"]].copy()
    for c, label in cols.items():
        if c in t3:
            out[label] = (t3[c].map(views.jct_words) if c.startswith("completion")
                          else t3[c].map(lambda v: "" if pd.isna(v) else f"{v:.2f}"))
    return views.banded(out)


def _scatter_panels(traces):
    plt = figures._plt()
    fig, axes = plt.subplots(1, max(1, len(traces)), figsize=(6.0 * max(1, len(traces)), 5.0), squeeze=False)
    return plt, fig, axes[0]


def plot_accuracy_vs_earliness(t3: pd.DataFrame, path) -> Path:
    """F1 (x) against f1_auc (y) per method, one panel per trace."""
    traces = sorted(t3["trace"].unique())
    plt, fig, axes = _scatter_panels(traces)
    for ax, trace in zip(axes, traces):
        for r in t3[t3["trace"] == trace].itertuples(index=False):
            st = style_for(r.method)
            ax.scatter(r.f1, r.f1_auc, color=st.color, marker=st.marker, s=40 if st.highlight else 22, zorder=3)
            ax.annotate(display_name(r.method), (r.f1, r.f1_auc), fontsize=7, xytext=(3, 2),
                        textcoords="offset points")
        ax.plot([0, 1], [0, 1], color="0.8", linewidth=0.8)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("final F1 (mean over jobs, 0-1)")
        ax.set_ylabel("f1_auc: F1 averaged over normalized time (0-1)")
        ax.set_title(f"Accuracy vs earliness: {trace}")
        ax.grid(alpha=0.3)
    return figures._save(plt, fig, path)


def plot_ablation(ablation: pd.DataFrame, path) -> Path:
    """F1 and f1_auc per method under each protocol variant (rows of ``protocol_ablation``)."""
    plt = figures._plt()
    variants = list(dict.fromkeys(ablation["variant"]))
    methods = figures.ordered(ablation["method"])
    fig, axes = plt.subplots(1, 2, figsize=(13, 0.4 * len(variants) + 2.2), sharey=True)
    y = np.arange(len(variants))
    h = 0.8 / max(1, len(methods))
    for ax, metric in zip(axes, ("f1", "f1_auc")):
        for i, m in enumerate(methods):
            sub = ablation[ablation["method"] == m].groupby("variant")[metric].mean().reindex(variants)
            st = style_for(m)
            ax.barh(y + i * h - 0.4 + h / 2, sub.to_numpy(), height=h, color=st.color, label=display_name(m),
                    hatch="//" if is_reference_rule(m) else None)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"{metric} (mean over jobs, 0-1)")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, variants, fontsize=8)
    axes[0].invert_yaxis()
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle("Protocol ablation: the authors' preset, each setting switched back, and ours")
    return figures._save(plt, fig, path)


def plot_sensitivity(sens: pd.DataFrame, path) -> Path:
    """F1 and f1_auc against the straggler quantile, one line per method (NURD: per alpha)."""
    plt = figures._plt()
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), sharey=True)
    linestyles = ("-", "--", ":", "-.")
    for ax, metric in zip(axes, ("f1", "f1_auc")):
        for m in figures.ordered(sens["method"]):
            sm = sens[sens["method"] == m]
            alphas = sorted(sm["alpha"].dropna().unique()) or [np.nan]
            for j, a in enumerate(alphas):
                s2 = (sm if np.isnan(a) else sm[sm["alpha"] == a]).sort_values("quantile")
                kw = style_for(m).line_kwargs()
                if not np.isnan(a):
                    kw["linestyle"] = linestyles[j % len(linestyles)]
                label = display_name(m) + ("" if np.isnan(a) else f", alpha {a:g}")
                ax.plot(s2["quantile"], s2[metric], label=label, **kw)
        ax.set_xlabel("straggler quantile (tau = the job's latency quantile)")
        ax.set_ylabel(f"{metric} (mean over jobs, 0-1)")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle("NURD's sensitivity to alpha and the straggler quantile, beside the reference rules")
    return figures._save(plt, fig, path)


EARLINESS_CAPTION = (
    "Accuracy, earliness and completion time",
    "f1_auc: F1 averaged over normalized time k/10, k = 1..10 (a flag raised at t1 counts ten times, one "
    "raised just before tau once). median lead: the median over true positives of (latency - flag time) / "
    "tau. Jobs' completion time: what relaunching the flagged tasks does to it, in words (shortens or "
    "lengthens, by the mean share over jobs; Algorithm 2: unlimited machines; Algorithm 3: averaged over "
    "machine counts). docs/EVALUATION.md.")
ABLATION_CAPTION = (
    "Where the paper's numbers come from: the protocol ablation",
    "NURD, NURD-NC, GBTR, the best baseline and the reference rules under the authors' protocol (their "
    "released code), with each of its settings switched back to this pipeline's protocol one at a time, and "
    "under this pipeline's protocol. Means over jobs; column settings records every setting of the row "
    "(docs/EVALUATION.md).")
SENSITIVITY_CAPTION = (
    "NURD's sensitivity to alpha and the straggler quantile",
    "NURD's F1 and f1_auc for alpha in {0, 0.25, 0.5} and quantile in {0.7, 0.8, 0.9, 0.95} (the paper "
    "claims robustness over p70-p95), beside the reference rules at the same quantile (no alpha). Means over jobs.")


OPERATOR_CAPTION = (
    "The operator's view (speculative copies, threshold estimated online, checkpoints until the job ends)",
    "What a production scheduler would see: each method is given tau_hat(t), the job's p90 latency as "
    "estimated at checkpoint t (Kaplan-Meier over the finished tasks and the running ones censored), not the "
    "true p90; checkpoints go on until the job's last task ends (a straggler flagged before it ends is a "
    "true positive); a flag launches a copy of the task on another machine, the first attempt to finish "
    "wins and the other is killed (Spark, Hadoop, LATE, Mantri, Dolly). Jobs' completion time: what the "
    "copies do to it, in words (shortens or lengthens by the mean share over jobs and 10 seeds), with "
    "unlimited machines and averaged over 100-900 machines; p90 over jobs: the job at the 90th percentile "
    "of (new - original) / original (the tail; a copy never delays, so it never lengthens); extra machine time: the time both attempts ran, as a share of the job's original machine "
    "time. Free rules: no model; the oracle copies every true straggler at the first checkpoint (the "
    "headroom). Pareto: no other row shortens jobs as much for as little; beats free rules: no free rule "
    "shortens jobs as much for as little extra machine time (docs/EVALUATION.md).")
OPERATOR_PARETO_CAPTION = (
    "Operator's view: how much jobs are shortened against the extra machine time",
    "One point per method (unlimited machines, mean over jobs and seeds); open squares: free rules; star: "
    "the oracle; dashed: the Pareto front; thin lines: each survival method's outcome as the price of machine "
    "time (lambda) goes from 0 to 8, its threshold chosen on earlier jobs. Up and left is better.")


TRACES_CAPTION = (
    "Traces",
    "Every trace of this report, each its own rows in every table below: whether its events are real or "
    "generated, the jobs and methods evaluated, and the features the methods saw (NURD_FEATURE_SET; "
    "docs/EVENT_FEATURES.md). The paper's numbers were measured with usage features: beside a trace whose "
    "methods saw event features they compare the task, not the inputs.")


SURVIVAL_VERDICT_CAPTION = (
    "The survival family against each free rule (operator's protocol)",
    "Per survival method and free rule: the method minus the rule in the jobs' completion time reduction and "
    "in extra machine time (percentage points of the job's own, speculative copies, unlimited machines, mean "
    "over 10 relaunch seeds) and in F1 AUC, mean over the jobs both were scored on, with 95% paired bootstrap "
    "intervals over jobs (docs/EVALUATION.md, 'The survival family').")
COST_CURVE_CAPTION = (
    "The survival family's cost-aware threshold over the price of machine time",
    "Per lambda: each job's threshold is the one that maximized, over the jobs that ended before its first "
    "checkpoint, the JCT reduction minus lambda x the extra machine time; the row's outcome is over all jobs "
    "(jobs with too few earlier jobs use the fallback threshold). 'configured' marks NURD_COST_LAMBDA.")


ANSWER_CAPTION = (
    "The answer: what 2% extra machine time buys (operator's protocol)",
    "Per trace: Spark's speculation with its settings (quantile, multiplier, minTaskRuntime) chosen for each job on "
    "the jobs that ended before it, the learned method with the largest cut at 2% (chosen the same way), the best "
    "free rule when it is not Spark's, and the oracle's headroom. Brackets: 95% bootstrap intervals over jobs; vs "
    "tuned Spark: paired over jobs. Every budget and every method: the next table, and docs/EVALUATION.md "
    "'Cost curves'.")
MATCHED_BUDGETS_CAPTION = (
    "Every method at every budget of extra machine time (operator's protocol)",
    "Per budget (0.5, 1, 2, 5% extra machine time, a share of the jobs' own): each method's flag cut (Spark's "
    "rule: quantile x multiplier x minTaskRuntime; the KM rule: q; wait-for-tau: its margin; a model: the cut on "
    "its score) chosen for each job on the jobs that ended before that job's first checkpoint (the largest mean "
    "shortening of the jobs' completion time (JCT) within the budget there; no copy while fewer than NURD_HISTORY_MIN_JOBS jobs have ended or when "
    "nothing fits), then scored on that job: nothing is tuned on the jobs it is scored on. JCT: mean over jobs "
    "and 10 relaunch seeds, speculative copies, unlimited machines, with a 95% bootstrap interval over jobs; "
    "extra machine: what that choice cost on these jobs (it can exceed the budget: it was chosen on earlier "
    "ones). vs best free rule: the method minus the free rule with the largest tuned shortening of the jobs' completion time (JCT) at that budget, "
    "per job, with a 95% paired bootstrap interval over jobs; verdict: above or below when the interval "
    "excludes 0, else a tie. The curve's best within budget is chosen on the same jobs (an upper bound, not a "
    "result); area to 5%: the mean over budgets 0-5% of the curve's best cut (docs/EVALUATION.md, 'Cost curves').")
BUDGET_CURVES_CAPTION = (
    "Figure 0. The jobs' completion-time cut against the extra machine time, every method",
    "Each line: the best shortening of the jobs' completion time (JCT) a method's sweep reaches within a budget (its upper envelope over its flag "
    "cuts, mean over jobs, chosen on the same jobs); dashed: the free rules' sweeps; bold black: Spark's rule "
    "tuned on earlier jobs at each budget (an honest outcome, below its dashed in-sample envelope); star: the "
    "oracle. Vertical lines: the budgets of the table above. Up and left is better.")
SWEEP_CURVE_CAPTION = (
    "Every point of every sweep",
    "Per method and flag cut ('default': the method's own rule; Spark: q<quantile>-m<multiplier>-min<s>): the "
    "mean over jobs of the shortening of the jobs' completion time (JCT) and of the extra machine time (percent), speculative copies, unlimited "
    "machines, 10 relaunch seeds.")


def build_report(out_dir, job_metrics_df: pd.DataFrame, f1_time_df: pd.DataFrame | None = None,
                 completion_df: pd.DataFrame | None = None, *, n_boot: int = 1000, seed: int = 0,
                 notes: str | None = None, completion_seeds=range(10), ablation_df: pd.DataFrame | None = None,
                 sensitivity_df: pd.DataFrame | None = None, operator_job_metrics: pd.DataFrame | None = None,
                 speculation_df: pd.DataFrame | None = None, traces_df: pd.DataFrame | None = None,
                 speculation_jobs_df: pd.DataFrame | None = None, cost_curve_df: pd.DataFrame | None = None,
                 reexecution_df: pd.DataFrame | None = None, budgets_df: pd.DataFrame | None = None,
                 sweep_curve_df: pd.DataFrame | None = None) -> Report:
    """Everything at once: Table 3 with the paper beside, earliness and completion time per method,
    F1 over time, completion time, the protocol ablation and NURD's sensitivity when given, the
    "what this run shows" paragraph, report.md and report.html. With ``operator_job_metrics`` and
    ``speculation_df`` (the operator's protocol, stragglers.reports.operator) the report leads with
    the operator's view and its Pareto figure; the paper's protocol follows. ``traces_df`` (one row per
    trace: its data, jobs, methods and the features they saw) becomes the first section, "Traces".
    ``speculation_jobs_df`` (per job: stragglers.prediction.completion.speculation_jobs) adds the
    survival family's intervals against the free rules and its sentence; ``cost_curve_df`` (the
    operator's cost_curve table) its curve over the price of machine time; ``reexecution_df`` (table
    reexecution_summary, asset reexecutions) what a copy buys on the traces' own re-executions.
    ``budgets_df`` and ``sweep_curve_df`` (stragglers.prediction.sweep: every method at every budget)
    put the operator's answer first: its paragraph, the curves' figure and the matched-budget table."""
    t3 = with_completion(compare_with_paper(table3(job_metrics_df, n_boot=n_boot, seed=seed)), completion_df)
    early = story.earliness(job_metrics_df)
    tables = {"table3": t3}
    md_views = {"table3": views.table3_view(t3, early)}
    plots: dict[str, object] = {}
    figures_after: dict[str, list[str]] = {}
    captions = views.captions(n_boot=n_boot, seed=seed, seeds=completion_seeds)
    cs = None
    answer = None

    def section(name: str, table: pd.DataFrame, view, *figures: tuple[str, object]) -> None:
        """Section ``name`` of the report: its table, its Markdown view and the figures (name, PNG)
        shown after it, in that order."""
        tables[name] = table
        md_views[name] = view
        plots.update(figures)
        figures_after[name] = [figure for figure, _ in figures]

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        if "f1_auc" in t3 and t3["f1_auc"].notna().any():
            heading, caption = EARLINESS_CAPTION
            captions["earliness"] = (heading, caption + " " + ranking_note(t3))
            section("earliness", t3.reindex(columns=["trace", "method", "f1", "f1_auc", "median_lead",
                                                     "completion_unlimited", "completion_limited_avg"]),
                    earliness_view(t3), ("accuracy_vs_earliness", plot_accuracy_vs_earliness(t3, d / "ae.png")))
        if f1_time_df is not None and len(f1_time_df):
            ft = f1_over_time_table(f1_time_df)
            section("f1_over_time", ft, views.f1_over_time_view(ft),
                    ("f1_over_time", plot_f1_over_time(ft, d / "f1_over_time.png")))
        if completion_df is not None and len(completion_df):
            cs = completion_summary(completion_df)
            limited = (completion_df["algorithm"] == "limited").any()
            figures = [("completion_unlimited", plot_completion_unlimited(completion_df, d / "cu.png"))] \
                if (completion_df["algorithm"] == "unlimited").any() else []
            if limited:
                figures.append(("completion_limited_avg", plot_completion_limited_avg(completion_df, d / "cla.png")))
            section("completion_summary", cs, views.completion_summary_view(cs), *figures)
            if limited:   # the per-machine-count table and figure exist only for the limited algorithm
                section("completion", completion_df, views.completion_view(completion_df),
                        ("completion_limited", plot_completion_limited(completion_df, d / "cl.png")))
            else:
                tables["completion"] = completion_df
        # optional tables of their own assets: shown with their plot when they were materialized
        for name, df, caption, plot, png in (
                ("protocol_ablation", ablation_df, ABLATION_CAPTION, plot_ablation, "pa.png"),
                ("nurd_sensitivity", sensitivity_df, SENSITIVITY_CAPTION, plot_sensitivity, "ns.png")):
            if df is not None and len(df):
                captions[name] = caption
                section(name, df, df.drop(columns=["settings"], errors="ignore"), (name, plot(df, d / png)))
        if reexecution_df is not None and len(reexecution_df):
            captions["reexecutions"] = ("What a copy buys: the traces' own re-executions", reexecution.INTRO)
            section("reexecutions", reexecution_df, reexecution.view(reexecution_df))
        tables["paper_table3"] = PAPER_TABLE3
        md_views["paper_table3"] = views.paper_table3_view(PAPER_TABLE3)
        head = story.headline(t3, early, cs)
        tables = {"headline": head, **tables}
        md_views["headline"] = story.headline_view(head)

        n_methods = job_metrics_df.groupby("trace")["method"].nunique().to_dict()
        summary = story.what_this_run_shows(head, n_methods)
        if operator_job_metrics is not None and len(operator_job_metrics) and speculation_df is not None:
            op = operator.operator_table(table3(operator_job_metrics, n_boot=n_boot, seed=seed), speculation_df)
            tables = {"operator_view": op, **tables}
            md_views["operator_view"] = operator.operator_view(op)
            plots["operator_pareto"] = operator.plot_pareto(op, d / "op.png", cost_curve_df)
            figures_after["operator_view"] = ["operator_pareto"]
            captions["operator_view"] = OPERATOR_CAPTION
            captions["fig:operator_pareto"] = OPERATOR_PARETO_CAPTION
            captions["headline"] = ("Reproducing the paper's protocol: headline numbers", captions["headline"][1])
            family = ""
            if speculation_jobs_df is not None and len(speculation_jobs_df):
                verdict = operator.family_verdict(operator_job_metrics, speculation_jobs_df, n_boot=n_boot, seed=seed)
                if len(verdict):
                    tables["survival_verdict"] = verdict
                    captions["survival_verdict"] = SURVIVAL_VERDICT_CAPTION
                    family = "\n\n" + operator.family_sentences(verdict, op)
            if cost_curve_df is not None and len(cost_curve_df):
                tables["cost_curve"] = cost_curve_df
                captions["cost_curve"] = COST_CURVE_CAPTION
            first = operator.operator_paragraph(op)
            if budgets_df is not None and len(budgets_df) and sweep_curve_df is not None:
                # the answer first (every method at every budget); the single-point table stays below it
                first = budget_report.answer_paragraph(budgets_df, sweep_curve_df)
                md_views["operator_view"] = md_views["operator_view"].drop(columns=["Pareto", "beats free rules"])
                captions["operator_view"] = (OPERATOR_CAPTION[0] + ": each method at its own default",
                                             OPERATOR_CAPTION[1].split(" Pareto:")[0])
                tables = {"matched_budgets": budgets_df, **tables, "sweep_curve": sweep_curve_df}
                md_views["matched_budgets"] = budget_report.budget_view(budgets_df)
                md_views["sweep_curve"] = sweep_curve_df.assign(
                    jct_reduction=(sweep_curve_df["jct_reduction"] * 100).round(2),
                    extra_machine_share=(sweep_curve_df["extra_machine_share"] * 100).round(3)).rename(
                    columns={"jct_reduction": "jobs' completion time shortened by (%)", "extra_machine_share": "extra machine (%)"})
                plots["budget_curves"] = budget_report.plot_budget_curves(sweep_curve_df, budgets_df, d / "bc.png")
                answer = budget_report.answer_table(budgets_df, sweep_curve_df)
                figures_after["answer"] = ["budget_curves"]
                captions["answer"] = ANSWER_CAPTION
                captions["matched_budgets"] = MATCHED_BUDGETS_CAPTION
                captions["fig:budget_curves"] = BUDGET_CURVES_CAPTION
                captions["sweep_curve"] = SWEEP_CURVE_CAPTION
            summary = first + family + "\n\nReproducing the paper's protocol:\n\n" + summary
        if traces_df is not None and len(traces_df):   # first: what every table below is about
            tables = {"traces": traces_df, **tables}
            captions["traces"] = TRACES_CAPTION
        if answer is not None and len(answer):         # before all: the operator's answer and its figure
            tables = {"answer": answer, **tables}
        path = write_report(out_dir, tables, plots, notes=notes, markdown_tables=md_views,
                            summary=summary, captions=captions, figures_after=figures_after)
    out_dir = Path(out_dir)
    return Report(path, tables, {name: out_dir / f"{name}.png" for name in plots})
