"""How the report shows each table: headings, captions, units, family bands.

The CSV/Parquet files keep the raw columns; these views are what report.md
(and so report.html) prints: rates as 0-1 fractions with their 95% bootstrap
interval, reductions in %, every header with its unit, rows grouped by method
family with a header row per family (``html.BAND_MARK``) so the reference
rules stand as a band of their own.
"""

from __future__ import annotations

import pandas as pd

from stragglers.prediction.replay.metrics import RATES as METRICS
from stragglers.reports.page.html import BAND_MARK
from stragglers.reports.page.style import display_name, family_of, sort_key

FAMILY_NOTES = {
    "NURD family": "NURD and its ablations",
    "reference rules": "no model: what a scheduler gets for free",
    "outlier detectors": "unsupervised, PyOD",
    "PU learning": "positive-unlabeled classifiers",
    "survival / censored regression": "latency models that use censored tasks",
    "Wrangler": "SVM on resource usage",
}


def banded(df: pd.DataFrame, method_col: str = "method") -> pd.DataFrame:
    """Rows sorted by (trace, family, member) with a header row before each family.

    The method column shows display names; a header row has ``BAND_MARK`` +
    the family (and what it is) in the first column, other cells empty.
    """
    if df.empty:
        return df
    if "trace" in df and df["trace"].nunique() == 1:
        df = df.drop(columns="trace")      # one trace: the report names it once, in its opening
    d = df.assign(_family=df[method_col].map(family_of), _key=df[method_col].map(sort_key))
    by = ["trace", "_key"] if "trace" in d else ["_key"]
    d = d.sort_values(by, kind="mergesort")
    first = d.columns[0]
    rows, last = [], None
    for r in d.to_dict("records"):
        band = (r.get("trace"), r["_family"])
        if band != last:
            head = {c: "" for c in d.columns}
            note = FAMILY_NOTES.get(r["_family"])
            head[first] = f"{BAND_MARK}{r['_family']}" + (f" ({note})" if note else "")
            if "trace" in d and first != "trace":
                head["trace"] = r["trace"]
            rows.append(head)
            last = band
        r[method_col] = display_name(r[method_col])
        rows.append(r)
    return pd.DataFrame(rows, columns=d.columns).drop(columns=["_family", "_key"])


def _ci(v, lo, hi, digits=2) -> str:
    if v is None or pd.isna(v):
        return ""
    if lo is None or pd.isna(lo):
        return f"{v:.{digits}f}"
    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def lead_words(v) -> str:
    """The median lead as the report shows it: NaN is a method that caught no straggler on any job
    (the lead is a median over true positives)."""
    return "no straggler caught" if pd.isna(v) else f"{v:.2f}"


def table3_view(t3: pd.DataFrame, early: pd.DataFrame | None = None) -> pd.DataFrame:
    t = t3
    if early is not None and len(early) and "f1_auc" not in t:
        t = t.merge(early, on=["trace", "method"], how="left")
    rows = []
    for _, r in t.iterrows():
        row = {"trace": r["trace"], "method": r["method"], "jobs (count)": str(int(r["n_jobs"]))}
        for m in METRICS:
            row[f"{m.upper()} (0-1) [95% CI]"] = _ci(r[m], r.get(f"{m}_lo"), r.get(f"{m}_hi"))
        if "pooled_f1" in r:
            row["pooled F1 (0-1) [95% CI]"] = _ci(r["pooled_f1"], r.get("pooled_f1_lo"), r.get("pooled_f1_hi"))
        if "f1_auc" in r:
            row["F1 AUC (0-1)"] = _ci(r["f1_auc"], r.get("f1_auc_lo"), r.get("f1_auc_hi"))
        if "median_lead" in r:
            row["median lead (share of tau)"] = lead_words(r["median_lead"])
        for col, label in (("completion_unlimited", "jobs' completion time, Alg. 2"),
                           ("completion_limited_avg", "jobs' completion time, Alg. 3")):
            if col in r:
                row[label] = jct_words(r[col])
        if "paper_f1" in t:
            has = pd.notna(r.get("paper_f1"))
            row["paper TPR/FPR/FNR/F1 (0-1)"] = "/".join(f"{r[f'paper_{m}']:.2f}" for m in METRICS) if has else ""
            row["F1 minus paper"] = f"{r['f1_diff']:+.2f}" if has else ""
        rows.append(row)
    return banded(pd.DataFrame(rows))


def f1_over_time_view(ft: pd.DataFrame) -> pd.DataFrame:
    p = ft.pivot_table(index=["trace", "method"], columns="k", values="f1", sort=False)
    p.columns = [f"F1 at t={k / 10:.1f}" for k in p.columns]
    return banded(p.map(lambda v: "" if pd.isna(v) else f"{v:.3f}").reset_index())


def _pct(v) -> str:
    return "" if pd.isna(v) else f"{v:.1f}"


def jct_words(reduction) -> str:
    """A job-completion-time effect as it reads: ``reduction`` is the fraction by which jobs got
    shorter (the result tables' sign: positive = shorter), shown as "shortens 9.0%", "lengthens
    35.7%" or "no change" (within 0.05 points), never as a signed number a reader must decode."""
    if reduction is None or pd.isna(reduction):
        return ""
    v = 100.0 * float(reduction)
    if abs(v) < 0.05:
        return "no change"
    return f"shortens {v:.1f}%" if v > 0 else f"lengthens {-v:.1f}%"


def jct_sentence(reduction) -> str:
    """The same effect inside a sentence: "shortens jobs by 9.0%", "lengthens jobs by 35.7%"."""
    words = jct_words(reduction)
    if words in ("", "no change"):
        return "leaves job completion time unchanged" if words else "has no measured effect on jobs"
    verb, amount = words.split(" ", 1)
    return f"{verb} jobs by {amount}"


def completion_view(completion: pd.DataFrame) -> pd.DataFrame:
    lim = completion[completion["algorithm"] == "limited"]
    p = lim.pivot_table(index=["trace", "method"], columns="machines", values="reduction_mean", sort=False)
    p = p.map(jct_words)
    p.columns = [f"{int(m)} machines" for m in p.columns]
    return banded(p.reset_index())


def completion_summary_view(cs: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({
        "trace": cs["trace"], "method": cs["method"],
        "jobs (count)": cs["n_jobs"].map(lambda v: "" if pd.isna(v) else str(int(v))),
        "unlimited machines": cs["unlimited"].map(jct_words),
        "std over seeds (pp)": (cs["unlimited_std"] * 100).map(_pct),
        "limited, mean over machine counts": cs["limited_avg"].map(jct_words),
        "paper NURD unlimited": cs["paper_nurd_unlimited"].map(jct_words),
        "paper NURD limited": cs["paper_nurd_limited_avg"].map(jct_words),
    })
    return banded(out)


def paper_table3_view(paper: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 3 as it prints it: one row per method, its two traces side by side."""
    cells = paper.assign(cell=[" / ".join(f"{r[m]:.2f}" for m in METRICS) for _, r in paper.iterrows()])
    wide = cells.pivot(index="method", columns="paper_trace", values="cell")
    rates = " / ".join(m.upper() for m in METRICS)
    out = pd.DataFrame({"method": wide.index,
                        **{f"{name}: {rates} (0-1)": wide[col].to_numpy() for col, name in
                           (("google", "Google"), ("alibaba", "Alibaba")) if col in wide}})
    return banded(out.reset_index(drop=True))


def captions(*, n_boot: int, seed: int, seeds) -> dict[str, tuple[str, str]]:
    """name -> (heading, caption) for every table, "fig:" + name for every figure of the report (the
    report numbers them in the order it shows them)."""
    seeds = list(seeds)
    return {
        "headline": (
            "Headline numbers under the paper's protocol",
            "Per trace: NURD, the best of the paper's other rivals (highest mean F1 outside the NURD family and "
            "the free rules), the best free rule and every free rule, and the oracle. F1: mean over jobs (0-1) "
            "with its 95% bootstrap interval; F1 AUC: mean F1 over the ten normalized times (earliness); jobs' "
            "completion time: what killing and restarting the flagged tasks does to it, in words (shortens or "
            "lengthens); paper F1: the paper's number for the method on the matching real trace. Empty cell: not "
            "measured in this run."),
        "table3": (
            "Prediction accuracy, the paper's Table 3 with its numbers beside ours",
            f"Mean over jobs of each job's true-positive, false-positive and false-negative rates and F1, "
            f"computed over the tasks still running at the first checkpoint t0 (fractions, 0-1). Brackets: 95% "
            f"percentile bootstrap interval over jobs ({n_boot} resamples, seed {seed}); two methods whose "
            f"intervals overlap are not told apart by these jobs. Pooled F1 sums the confusion counts over "
            f"jobs first. F1 AUC is the mean F1 over the ten normalized times (earliness: 1 = every straggler "
            f"flagged from the first tenth of [t0, tau] on). The paper's numbers (its Google or Alibaba column) "
            f"stand beside ours for the real traces only. Rows are grouped by family; the shaded band is the "
            f"free rules and the oracle, which use no model."),
        "f1_over_time": (
            "F1 over normalized time (the paper's Figures 2-3)",
            "F1 of the flags raised up to normalized time t = k/10 of the window [t0, tau] (t0: first "
            "checkpoint, tau: the job's straggler threshold), mean over jobs (0-1). A method that flags early "
            "rises early; the area under a row is its F1 AUC."),
        "completion_summary": (
            "Change in job completion time under the paper's protocol (the paper's Figures 4-9)",
            f"What killing and restarting every flagged task does to the jobs' completion time, in words "
            f"(shortens or lengthens by the mean share over jobs and {len(seeds)} simulation seeds {seeds}; "
            f"Algorithm 2: unlimited machines; Algorithm 3: a fixed number of machines, here the mean over machine "
            f"counts); the spread over seeds in percentage points (pp). The paper reports NURD's figures only "
            f"(last two columns)."),
        "completion": (
            "Change in job completion time against the number of machines (paper's protocol)",
            "Algorithm 3 with the given number of machines for the job: shortens or lengthens by the mean share "
            "over jobs and seeds."),
        "paper_table3": (
            "The paper's Table 3 as published",
            "As published (fractions, 0-1): each method's TPR, FPR, FNR and F1 on the paper's two traces, "
            "Google's and Alibaba's."),
        "fig:f1_over_time": (
            "F1 over normalized time",
            "Each panel shows one group of method families, one row of panels per trace, with a shared y axis; "
            "NURD (black, thick) and the free rules (warm colours, dash-dot) are repeated in every panel as "
            "yardsticks; methods whose lines coincide are drawn as one line and named together in the legend "
            "(A = B). x: normalized time k/10 of [t0, tau]; y: F1 of the flags raised so far, mean over jobs. "
            "Higher and further left is better."),
        "fig:completion_unlimited": (
            "Change in job completion time, unlimited machines (Algorithm 2, paper's protocol)",
            f"One bar per method, grouped by family (colour = family, NURD black), the free rules on the shaded "
            f"band. Bars: the mean change over jobs and seeds (%): to the right, jobs got longer; to the left, "
            f"shorter. Error bars: one standard deviation over the {len(seeds)} simulation seeds (the spread of "
            f"the restart draws, not of the jobs). Dashed line: the paper's NURD figure where the trace has one."),
        "fig:completion_limited_avg": (
            "Change in job completion time, limited machines (Algorithm 3, paper's protocol), mean over machine "
            "counts",
            "As {fig:completion_unlimited} for Algorithm 3, averaged over the machine counts of "
            "{table:completion} (%); no error bars (each bar is a mean over machine counts)."),
        "fig:completion_limited": (
            "Change in job completion time against the number of machines (paper's protocol)",
            "Small multiples as in {fig:f1_over_time}; x: machines available to the job (count); y: the change "
            "in job completion time (%, positive: longer), mean over jobs and seeds. Methods whose lines coincide "
            "are drawn as one line and named together in the legend (A = B)."),
    }
