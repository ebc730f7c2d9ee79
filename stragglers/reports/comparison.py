"""The comparison with the paper, rendered from warehouse tables.

Plain pandas in, files out (no Dagster, no DuckDB here):

- ``table3``: the paper's Table 3 for our runs: per (trace, method) mean
  TPR / FPR / FNR / F1 over jobs with 95% bootstrap intervals over jobs, the
  pooled (micro) figures when the confusion counts are there, and the best
  F1 per trace.
- ``PAPER_TABLE3`` and ``compare_with_paper``: the paper's numbers
  (TARGETS.md) beside ours, with the difference, for ``google_2011`` and the
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
import tempfile
import uuid
import zlib
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from stragglers.prediction.metrics import RATES as METRICS, rates
from stragglers.reports import figures, story, views
from stragglers.reports.html import render_html
from stragglers.traces.formats import FORMATS


# Registry names, in the paper's Table 3 order.
METHOD_ORDER = (
    "gbtr", "abod", "cblof", "hbos", "iforest", "knn", "lof", "mcd", "ocsvm",
    "pca", "sos", "lscp", "cof", "sod", "xgbod", "pu_en", "pu_bg", "tobit",
    "grabit", "coxph", "wrangler", "nurd_nc", "nurd",
)
DISPLAY_NAMES = {
    "gbtr": "GBTR", "abod": "ABOD", "cblof": "CBLOF", "hbos": "HBOS",
    "iforest": "IForest", "knn": "KNN", "lof": "LOF", "mcd": "MCD",
    "ocsvm": "OCSVM", "pca": "PCA", "sos": "SOS", "lscp": "LSCP", "cof": "COF",
    "sod": "SOD", "xgbod": "XGBOD", "pu_en": "PU-EN", "pu_bg": "PU-BG",
    "tobit": "Tobit", "grabit": "Grabit", "coxph": "CoxPH",
    "wrangler": "Wrangler", "nurd_nc": "NURD-NC", "nurd": "NURD",
}

# Which column of the paper's Table 3 a trace is compared with.
PAPER_TRACE = {name: f.paper_column for name, f in FORMATS.items() if f.paper_column}

# TARGETS.md: Table 3, "TPR/FPR/FNR/F1" for Google then Alibaba.
_PAPER_TEXT = """
gbtr     .46/.01/.54/.57   .16/.01/.48/.27
abod     .95/.56/.05/.29   .02/.01/.98/.04
cblof    .99/.69/.01/.24   .69/.50/.31/.33
hbos     .99/.68/.01/.24   .56/.39/.44/.32
iforest  .94/.52/.06/.31   .58/.45/.42/.29
knn      .97/.49/.03/.32   .57/.42/.43/.29
lof      .90/.45/.10/.33   .39/.24/.61/.25
mcd      .99/.52/.01/.31   .75/.45/.25/.42
ocsvm    .91/.47/.09/.32   .56/.41/.44/.29
pca      .61/.27/.39/.26   .03/.02/.97/.05
sos      .22/.24/.78/.12   .08/.08/.92/.11
lscp     .96/.51/.04/.29   .65/.44/.35/.35
cof      .27/.21/.73/.14   .10/.07/.90/.14
sod      .25/.08/.75/.19   .18/.28/.82/.18
xgbod    .58/.18/.41/.28   .48/.14/.67/.38
pu_en    .99/.67/.01/.27   .72/.12/.28/.54
pu_bg    .99/.99/.01/.16   .86/.16/.14/.57
tobit    .97/.52/.03/.46   .35/.02/.15/.32
grabit   .91/.17/.04/.70   .72/.19/.28/.49
coxph    .87/.28/.11/.61   .45/.10/.21/.45
wrangler .95/.42/.15/.46   .83/.46/.18/.38
nurd_nc  .96/.60/.14/.42   .98/.57/.12/.37
nurd     .95/.11/.09/.81   .87/.13/.17/.59
"""


def _parse_paper_table3() -> pd.DataFrame:
    rows = []
    for line in _PAPER_TEXT.strip().splitlines():
        method, google, alibaba = line.split()
        for paper_trace, cell in (("google", google), ("alibaba", alibaba)):
            vals = [float(v) for v in cell.split("/")]
            rows.append((method, paper_trace, *vals))
    return pd.DataFrame(rows, columns=["method", "paper_trace", *METRICS])


#: The paper's Table 3 (means over jobs), long form: method, paper_trace
#: ('google' | 'alibaba'), tpr, fpr, fnr, f1.
PAPER_TABLE3: pd.DataFrame = _parse_paper_table3()

#: The paper's completion-time headline figures (Section 7.3), fractions.
PAPER_COMPLETION = pd.DataFrame(
    [
        ("google", "unlimited", 0.258, 0.038),
        ("alibaba", "unlimited", 0.186, 0.035),
        ("google", "limited_avg", 0.531, 0.047),
        ("alibaba", "limited_avg", 0.466, 0.088),
    ],
    columns=["paper_trace", "algorithm", "nurd_reduction", "nurd_margin_over_best_baseline"],
)


def method_sort_key(methods: pd.Series) -> pd.Series:
    """Paper order first, unknown methods after (alphabetically)."""
    pos = {m: i for i, m in enumerate(METHOD_ORDER)}
    return methods.map(lambda m: (pos.get(m, len(pos)), str(m)))


def _sort(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    keys = [c for c in by if c != "method"]
    tmp = df.assign(_m=method_sort_key(df["method"]))
    cols = [*keys[:1], "_m", *keys[1:]] if keys else ["_m"]
    return tmp.sort_values(cols, kind="mergesort").drop(columns="_m").reset_index(drop=True)


def display_name(method: str) -> str:
    return DISPLAY_NAMES.get(method, method)


# ---------------------------------------------------------------------------
# Table 3
# ---------------------------------------------------------------------------

def _group_rng(seed: int, trace: str, method: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(str(trace).encode()), zlib.crc32(str(method).encode())])


def _boot_counts(rng: np.random.Generator, n_jobs: int, n_boot: int, chunk: int = 200):
    """Yield (b, n_jobs) resample-count matrices, n_boot rows in all."""
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        idx = rng.integers(0, n_jobs, size=(b, n_jobs)) + (np.arange(b) * n_jobs)[:, None]
        yield np.bincount(idx.ravel(), minlength=b * n_jobs).reshape(b, n_jobs).astype(float)
        done += b


def _weighted_nanmean(counts: np.ndarray, vals: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(vals)
    num = counts @ np.where(ok, vals, 0.0)
    den = counts @ ok.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def _pooled(tp, fp, fn, tn) -> dict[str, np.ndarray]:
    """Pooled rates from summed counts, with the per-job convention (stragglers.prediction.metrics)."""
    return rates(tp, fp, fn, tn)


def table3(job_metrics_df: pd.DataFrame, n_boot: int = 1000, seed: int = 0,
           level: float = 0.95) -> pd.DataFrame:
    """Per (trace, method): mean metrics over jobs with bootstrap intervals.

    Columns: trace, method, n_jobs, then for each of tpr, fpr, fnr, f1 the
    mean and ``<m>_lo`` / ``<m>_hi``; if tp, fp, fn, tn are present, the same
    for pooled (micro) figures as ``pooled_<m>`` (+ ``_lo``/``_hi``); ``best_f1``.
    """
    need = {"trace", "method", "job_id", *METRICS}
    missing = need - set(job_metrics_df.columns)
    if missing:
        raise ValueError(f"job_metrics_df lacks columns {sorted(missing)}")
    has_counts = {"tp", "fp", "fn", "tn"} <= set(job_metrics_df.columns)
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    rows = []
    for (trace, method), g in job_metrics_df.groupby(["trace", "method"], sort=False):
        vals = g[list(METRICS)].to_numpy(dtype=float)
        row: dict = {"trace": trace, "method": method, "n_jobs": int(g["job_id"].nunique())}
        with np.errstate(invalid="ignore"):
            means = np.array([np.nanmean(c) if np.any(~np.isnan(c)) else np.nan for c in vals.T])
        if has_counts:
            cnt = g[["tp", "fp", "fn", "tn"]].to_numpy(dtype=float)
            pooled = _pooled(*cnt.sum(axis=0))
        boots, boots_pooled = [], []
        if n_boot > 0 and len(g) > 0:
            for counts in _boot_counts(_group_rng(seed, trace, method), len(g), n_boot):
                boots.append(_weighted_nanmean(counts, vals))
                if has_counts:
                    s = counts @ cnt
                    pm = _pooled(s[:, 0], s[:, 1], s[:, 2], s[:, 3])
                    boots_pooled.append(np.column_stack([pm[m] for m in METRICS]))
        B = np.concatenate(boots) if boots else np.full((1, len(METRICS)), np.nan)
        for k, m in enumerate(METRICS):
            row[m] = means[k]
            lo, hi = _nanpercentile(B[:, k], q)
            row[f"{m}_lo"], row[f"{m}_hi"] = lo, hi
        if has_counts:
            BM = np.concatenate(boots_pooled) if boots_pooled else np.full((1, len(METRICS)), np.nan)
            for k, m in enumerate(METRICS):
                row[f"pooled_{m}"] = float(pooled[m])
                lo, hi = _nanpercentile(BM[:, k], q)
                row[f"pooled_{m}_lo"], row[f"pooled_{m}_hi"] = lo, hi
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    best = out.groupby("trace")["f1"].transform("max")
    out["best_f1"] = (out["f1"] == best) & out["f1"].notna()
    return _sort(out, ["trace", "method"])


def _nanpercentile(x: np.ndarray, q) -> tuple[float, float]:
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return np.nan, np.nan
    lo, hi = np.percentile(x, q)
    return float(lo), float(hi)


def compare_with_paper(t3: pd.DataFrame) -> pd.DataFrame:
    """Our Table 3 with the paper's numbers beside it.

    Adds ``paper_trace`` ('google' for google_2011, 'alibaba' for the Alibaba
    traces, NaN otherwise), ``paper_<m>`` and ``<m>_diff`` (ours - paper) for
    m in tpr, fpr, fnr, f1. Rows of other traces keep NaN there.
    """
    out = t3.copy()
    out["paper_trace"] = out["trace"].map(PAPER_TRACE)
    paper = PAPER_TABLE3.rename(columns={m: f"paper_{m}" for m in METRICS})
    out = out.merge(paper, on=["method", "paper_trace"], how="left")
    for m in METRICS:
        out[f"{m}_diff"] = out[m] - out[f"paper_{m}"]
    return _sort(out, ["trace", "method"])


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

def to_markdown(df: pd.DataFrame, floatfmt: str = ".3f", numparse: bool = True) -> str:
    """GitHub-style Markdown table (tabulate); NaN shown empty, no index. ``numparse=False``
    prints strings as they are (views whose numbers are formatted already)."""
    from tabulate import tabulate

    if not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index()
    if df.empty:
        return "_(no rows)_"
    df = df.astype(object).where(df.notna(), None)     # tabulate's missingval applies to None
    return tabulate(df, headers="keys", tablefmt="github", floatfmt=floatfmt,
                    showindex=False, missingval="", disable_numparse=not numparse)


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
            md += [to_markdown(view, numparse=name not in (markdown_tables or {})), ""]
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


def build_report(out_dir, job_metrics_df: pd.DataFrame, f1_time_df: pd.DataFrame | None = None,
                 completion_df: pd.DataFrame | None = None, *, n_boot: int = 1000, seed: int = 0,
                 notes: str | None = None, completion_seeds=range(10)) -> Path:
    """Everything at once: Table 3 with the paper beside, F1 over time, completion time,
    the "what this run shows" paragraph, report.md and report.html."""
    t3 = compare_with_paper(table3(job_metrics_df, n_boot=n_boot, seed=seed))
    early = story.earliness(job_metrics_df)
    tables = {"table3": t3}
    md_views = {"table3": views.table3_view(t3, early)}
    plots: dict[str, object] = {}
    figures_after: dict[str, list[str]] = {}
    cs = None
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        if f1_time_df is not None and len(f1_time_df):
            ft = f1_over_time_table(f1_time_df)
            tables["f1_over_time"] = ft
            md_views["f1_over_time"] = views.f1_over_time_view(ft)
            plots["f1_over_time"] = plot_f1_over_time(ft, d / "f1_over_time.png")
            figures_after["f1_over_time"] = ["f1_over_time"]
        if completion_df is not None and len(completion_df):
            cs = completion_summary(completion_df)
            tables["completion_summary"] = cs
            md_views["completion_summary"] = views.completion_summary_view(cs)
            figures_after["completion_summary"] = []
            if (completion_df["algorithm"] == "unlimited").any():
                plots["completion_unlimited"] = plot_completion_unlimited(completion_df, d / "cu.png")
                figures_after["completion_summary"].append("completion_unlimited")
            tables["completion"] = completion_df
            if (completion_df["algorithm"] == "limited").any():
                md_views["completion"] = views.completion_view(completion_df)
                plots["completion_limited_avg"] = plot_completion_limited_avg(completion_df, d / "cla.png")
                plots["completion_limited"] = plot_completion_limited(completion_df, d / "cl.png")
                figures_after["completion_summary"].append("completion_limited_avg")
                figures_after["completion"] = ["completion_limited"]
        tables["paper_table3"] = PAPER_TABLE3
        md_views["paper_table3"] = views.paper_table3_view(PAPER_TABLE3)
        head = story.headline(t3, early, cs)
        tables = {"headline": head, **tables}
        md_views["headline"] = story.headline_view(head)
        n_methods = job_metrics_df.groupby("trace")["method"].nunique().to_dict()
        return write_report(out_dir, tables, plots, notes=notes, markdown_tables=md_views,
                            summary=story.what_this_run_shows(head, n_methods),
                            captions=views.captions(n_boot=n_boot, seed=seed, seeds=completion_seeds),
                            figures_after=figures_after)
