"""What a run shows, in words generated from its numbers (no hard-coded claims).

- ``headline``: per trace, the rows a reader looks at first: NURD, the best
  baseline (the best mean F1 outside the NURD family and the reference
  rules), the best free rule and every free rule, with F1 and its
  95% interval, F1 AUC (earliness) when the run has it, the completion-time
  reduction when the report has it, and the paper's F1.
- ``what_this_run_shows``: the report's opening paragraph, built from
  ``headline``; every sentence states a number of this run or the paper.
- ``terminal_summary``: the text printed at the end of README command 1
  (warehouse tables and the report's files in, text out; read-only): the answer box first, as
  the report shows it (its table ``answer``), and where the report is.

Plain pandas and DuckDB, no Dagster.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from stragglers.prediction.methods import FREE_RULES
from stragglers.prediction.replay.metrics import table3
from stragglers.reports.sections.answer_box import box_lines
from stragglers.reports.sections.operator import operator_headline_text, operator_paragraph
from stragglers.reports.sections.paper import compare_with_paper
from stragglers.reports.page.render import markdown_table
from stragglers.reports.page.style import FAMILIES, REFERENCE_FAMILY, display_name, family_of
from stragglers.reports.page.views import jct_sentence, jct_words

NURD_FAMILY = FAMILIES["NURD family"]
HEADLINE_COLUMNS = ["trace", "role", "method", "n_jobs", "f1", "f1_lo", "f1_hi", "f1_auc",
                    "unlimited", "limited_avg", "paper_f1"]


def earliness(job_metrics_df: pd.DataFrame) -> pd.DataFrame:
    """Mean F1 AUC over jobs per (trace, method); empty when the run did not record it."""
    if "f1_auc" not in job_metrics_df or job_metrics_df["f1_auc"].isna().all():
        return pd.DataFrame(columns=["trace", "method", "f1_auc"])
    return job_metrics_df.groupby(["trace", "method"], as_index=False)["f1_auc"].mean()


def headline(t3: pd.DataFrame, early: pd.DataFrame | None = None,
             completion: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows per trace: NURD, best baseline, best free rule, then the other free rules and the oracle.

    ``t3``: Table 3 (columns trace, method, n_jobs, f1, f1_lo, f1_hi, optional
    paper_f1); ``early``: ``earliness()``; ``completion``: the completion
    summary (trace, method, unlimited, limited_avg).
    """
    t = t3.copy()
    for extra, cols in ((early, ["f1_auc"]), (completion, ["unlimited", "limited_avg"])):
        if extra is not None and len(extra):
            t = t.merge(extra[["trace", "method", *[c for c in cols if c in extra]]], on=["trace", "method"],
                        how="left", suffixes=("_t3", ""))
    rows = []
    for trace, g in t.groupby("trace", sort=True):
        g = g.set_index("method")
        fam = g.index.map(family_of)
        baselines = g[(~g.index.isin(NURD_FAMILY)) & (fam != REFERENCE_FAMILY) & g["f1"].notna()]
        # the free rules; the oracle (reads the true labels) is shown last, as the headroom
        rules = g[(fam == REFERENCE_FAMILY) & g.index.isin(FREE_RULES) & g["f1"].notna()]
        picks = []
        if "nurd" in g.index:
            picks.append(("NURD", "nurd"))
        if len(baselines):
            picks.append(("best baseline", baselines["f1"].idxmax()))
        if len(rules):
            best_rule = rules["f1"].idxmax()
            picks.append(("best free rule", best_rule))
            picks += [("free rule", m) for m in rules.index if m != best_rule]
        if "oracle" in g.index:
            picks.append(("oracle (headroom)", "oracle"))
        for role, m in picks:
            r = g.loc[m]
            rows.append({"trace": trace, "role": role, "method": m,
                         **{c: r.get(c, np.nan) for c in HEADLINE_COLUMNS[3:]}})
    return pd.DataFrame(rows, columns=HEADLINE_COLUMNS)


def headline_view(head: pd.DataFrame) -> pd.DataFrame:
    """The headline rows formatted for a reader: units in the headers, reductions in %."""
    def pct(v):
        return "" if pd.isna(v) else f"{v * 100:.1f}"

    def num(v):
        return "" if pd.isna(v) else f"{v:.2f}"

    return pd.DataFrame({
        "trace": head["trace"], "role": head["role"], "method": head["method"].map(display_name),
        "jobs (count)": head["n_jobs"].map(lambda v: "" if pd.isna(v) else str(int(v))),
        "F1 (0-1) [95% CI]": [f"{num(r.f1)} [{num(r.f1_lo)}, {num(r.f1_hi)}]" if not pd.isna(r.f1_lo)
                              else num(r.f1) for r in head.itertuples()],
        "F1 AUC (0-1)": head["f1_auc"].map(num),
        "jobs' completion time, unlimited machines": head["unlimited"].map(jct_words),
        "jobs' completion time, limited (avg)": head["limited_avg"].map(jct_words),
        "paper F1 (0-1)": head["paper_f1"].map(num),
    })


def headline_markdown(head: pd.DataFrame) -> str:
    return markdown_table(headline_view(head), numparse=False)


def _ci(r) -> str:
    if pd.isna(r.f1_lo):
        return f"{r.f1:.2f}"
    return f"{r.f1:.2f} (95% CI {r.f1_lo:.2f}-{r.f1_hi:.2f})"


def _overlap(a, b) -> bool | None:
    if any(pd.isna(v) for v in (a.f1_lo, a.f1_hi, b.f1_lo, b.f1_hi)):
        return None
    return a.f1_lo <= b.f1_hi and b.f1_lo <= a.f1_hi


def _versus(nurd, other, name: str) -> str:
    d = nurd.f1 - other.f1
    lead = f"NURD is ahead by {d:.2f}" if d > 0 else (f"{name} is ahead of NURD by {-d:.2f}" if d < 0
                                                     else "they tie")
    ov = _overlap(nurd, other)
    if ov is None:
        return lead
    return lead + ("; the 95% intervals overlap, so this run's jobs do not settle the order" if ov
                   else "; the 95% intervals do not overlap")


def what_this_run_shows(head: pd.DataFrame, n_methods: dict[str, int] | None = None) -> str:
    """One paragraph per trace, every number taken from ``head`` (see ``headline``)."""
    out = []
    for trace, g in head.groupby("trace", sort=True):
        by_role = {role: r for role, r in zip(g["role"], g.itertuples(index=False))}
        nurd, best, rule = by_role.get("NURD"), by_role.get("best baseline"), by_role.get("best free rule")
        n_jobs = int(next(iter(g["n_jobs"].dropna()), 0))
        s = [f"On `{trace}` ({n_jobs} jobs"
             + (f", {n_methods[trace]} methods evaluated" if n_methods and trace in n_methods else "") + "),"]
        if nurd is not None:
            s[0] += f" NURD reaches a mean F1 of {_ci(nurd)}"
            s[0] += (f" (the paper: {nurd.paper_f1:.2f} on its trace)." if not pd.isna(nurd.paper_f1)
                     else " (the paper reports no number for this trace).")
        else:
            s[0] += " NURD was not evaluated."
        if best is not None:
            s.append(f"The best baseline, {display_name(best.method)}, reaches {_ci(best)}"
                     + (f": {_versus(nurd, best, display_name(best.method))}." if nurd is not None else "."))
        else:
            s.append(("Beside NURD's family, only the free rules ran here" if rule is not None
                      else "Only NURD's family ran here") + "; the paper's other rivals (outlier detectors, PU "
                     "learning, censored regression, Wrangler) run with `bash scripts/baselines.sh` (partitions of "
                     "`baseline_eval`).")
        if rule is not None:
            s.append(f"The best free rule (no model) is {display_name(rule.method)} with {_ci(rule)}"
                     + (f": {_versus(nurd, rule, display_name(rule.method))}." if nurd is not None else "."))
            if nurd is not None and rule.f1 >= nurd.f1:
                s.append("On these jobs a free rule matches or beats NURD's accuracy, so any gain of NURD "
                         "must come from flagging earlier.")
        if nurd is not None and not pd.isna(nurd.f1_auc):
            others = [r for r in g.itertuples(index=False) if r.role != "NURD" and not pd.isna(r.f1_auc)]
            cmp = "; ".join(f"{display_name(r.method)} {r.f1_auc:.2f}" for r in others)
            s.append(f"Earliness: NURD's F1 AUC (mean F1 over the ten normalized times, 1 = every straggler "
                     f"flagged from the first tenth on) is {nurd.f1_auc:.2f}" + (f" against {cmp}." if cmp else "."))
        comp = g.dropna(subset=["unlimited"])
        if len(comp) and nurd is not None and not pd.isna(nurd.unlimited):
            top = comp.loc[comp["unlimited"].idxmax()]
            s.append(f"Killing and restarting the tasks NURD flags {jct_sentence(nurd.unlimited)} with unlimited machines"
                     + (f" and {jct_sentence(nurd.limited_avg)} on average over the limited-machine settings"
                        if not pd.isna(nurd.limited_avg) else "")
                     + ("; none of the best baseline and the free rules does better." if top.method == "nurd"
                        else f"; of NURD, the best baseline and the free rules, the largest reduction is "
                             f"{display_name(top.method)}'s, {top.unlimited * 100:.1f}%." if top.unlimited > 0
                        else f"; none of NURD, the best baseline and the free rules shortens jobs, "
                             f"{display_name(top.method)} does least harm ({jct_words(top.unlimited)})."))
        out.append(" ".join(s))
    return "\n\n".join(out)


# ---------------------------------------------------------------------------
# Terminal summary (README command 1)
# ---------------------------------------------------------------------------

def _fmt(v, pct=False) -> str:
    if v is None or pd.isna(v):
        return "-"
    return f"{v * 100:.1f}%" if pct else f"{v:.2f}"


def headline_text(head: pd.DataFrame) -> list[str]:
    lines = []
    for trace, g in head.groupby("trace", sort=True):
        lines.append(f"  {trace}:")
        lines.append(f"    {'':<22}{'method':<20}{'F1 [95% CI]':<20}{'F1 AUC':>8}{'jobs (unlim.)':>17}")
        for r in g.itertuples(index=False):
            ci = f"{r.f1:.2f} [{r.f1_lo:.2f}, {r.f1_hi:.2f}]" if not pd.isna(r.f1_lo) else _fmt(r.f1)
            lines.append(f"    {r.role:<22}{display_name(r.method):<20}{ci:<20}{_fmt(r.f1_auc):>8}"
                         f"{jct_words(r.unlimited) or '-':>17}")
    return lines


def warehouse_headline(warehouse: Path, reports_dir: Path) -> tuple[pd.DataFrame, dict]:
    """Headline rows and counts from a finished run's warehouse (opened read-only)."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        tables = set(con.execute("SELECT table_name FROM information_schema.tables").df()["table_name"])
        counts = {}
        for t in ("jobs", "tasks", "job_metrics"):
            if t in tables:
                counts[t] = int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
        jm = con.execute("SELECT * FROM job_metrics").df() if "job_metrics" in tables else pd.DataFrame()
        comp = con.execute("SELECT * FROM comparison").df() if "comparison" in tables else pd.DataFrame()
    finally:
        con.close()
    if jm.empty:
        return pd.DataFrame(columns=HEADLINE_COLUMNS), counts
    counts["methods"] = int(jm["method"].nunique())
    # the comparison table when it covers every method evaluated; else Table 3 from job_metrics
    if len(comp) and set(zip(comp.trace, comp.method)) >= set(zip(jm.trace, jm.method)):
        t3 = compare_with_paper(comp.drop(columns=[c for c in comp if c.startswith("paper_")], errors="ignore"))
    else:
        t3 = compare_with_paper(table3(jm, n_boot=200))
    cs = reports_dir / "completion_summary.parquet"
    completion = pd.read_parquet(cs) if cs.exists() else None
    return headline(t3, earliness(jm), completion), counts


def terminal_summary(data_dir: Path, *, elapsed_s: float | None = None, ran: str = "",
                     next_commands: list[tuple[str, str]] = (), answers: list[tuple[str, Path]] = ()) -> str:
    """The run's summary for the terminal; ``answers``: (name, path) of answer files a run may have
    written beside the report (the Spark answer's spark-defaults.conf), listed where they exist."""
    data_dir = Path(data_dir)
    warehouse, reports = data_dir / "warehouse.duckdb", data_dir / "reports"
    lines = ["", "=" * 78, "NURD pipeline: summary"]
    if ran or elapsed_s is not None:
        took = f"{int(elapsed_s // 60)}:{int(elapsed_s % 60):02d} (min:s)" if elapsed_s is not None else ""
        lines += textwrap.wrap(f"{ran}{' in ' + took if took else ''}", 78, initial_indent="  ran        ",
                               subsequent_indent=" " * 13)
    if not warehouse.exists():
        lines.append(f"  no warehouse at {warehouse}: the run did not get that far")
        return "\n".join(lines)
    head, counts = warehouse_headline(warehouse, reports)
    lines.append(f"  warehouse  {warehouse}  ({', '.join(f'{v} {k}' for k, v in counts.items())})")
    for name, path in (("report", reports / "report.html"), ("report.md", reports / "report.md"),
                       ("data docs", data_dir / "validation" / "index.html")):
        lines.append(f"  {name:<10} {path}" + ("" if path.exists() else "  (not written by this run)"))
    lines += [f"  {name:<10} {path}" for name, path in answers if path.exists()]
    lines.append("")
    answer = reports / "answer.parquet"
    if answer.exists() and (reports / "report.html").exists():
        # the answer first, word for word the box at the top of report.html (its table answer.csv)
        lines.append(f"The answer (the box at the top of {reports / 'report.html'}):")
        for line in box_lines(pd.read_parquet(answer)):
            indent = "  " + " " * (len(line) - len(line.lstrip()))
            lines += textwrap.wrap(line.strip(), 78, initial_indent=indent,
                                   subsequent_indent=indent + ("  " if line.startswith("  ") else "  "))
        lines += ["", "The evidence, the paper's tables and a glossary of every term: the rest of report.html.", ""]
    op_path = reports / "operator_view.parquet"
    if op_path.exists():
        op = pd.read_parquet(op_path)
        lines += ["Operator's view, each method at its own default (speculative copies; jobs = what the",
                  "copies do to job completion time, unlimited machines; extra machine = share of the job's):"]
        lines += operator_headline_text(op)
        if not answer.exists():   # else the answer above replaces it
            for para in operator_paragraph(op).split("\n\n"):
                lines += textwrap.wrap(para, 78, initial_indent="  ", subsequent_indent="  ")
        lines += ["", "Reproducing the paper's Table 3 (the paper's protocol: a flagged task is killed and restarted):"]
    if head.empty:
        lines.append("  no method has been evaluated under the paper's protocol")
    else:
        lines.append("Headline (means over jobs; F1 AUC = mean F1 over the 10 normalized times; "
                     "JCT = job completion time):")
        lines += headline_text(head)
        lines += ["", "What this run shows:"]
        for para in what_this_run_shows(head, None).split("\n\n"):
            lines += textwrap.wrap(para, 78, initial_indent="  ", subsequent_indent="  ") + [""]
    if next_commands:
        lines.append("Next:")
        lines += [f"  {what:<12}{cmd}" for what, cmd in next_commands]
    lines.append("=" * 78)
    return "\n".join(lines)
