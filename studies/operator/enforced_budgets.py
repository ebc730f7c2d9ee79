"""The budget enforced: the pre-named comparison, the realized spend, the headroom, Hadoop's caps.

    python studies/operator/enforced_budgets.py WAREHOUSE [WAREHOUSE ...] [--n-boot 1000] [--seed 0]
        [--min-jobs 5] [--write docs/ENFORCED_BUDGETS.md]

Reads warehouses whose operator's sweep ran (tables ``operator_sweep_outcomes`` and
``operator_capped_outcomes``) and prints, per trace, in Markdown (docs/EVALUATION.md, "Cost curves");
``--write`` also writes it, with the command, the commit and the date, as the page the docs quote
(docs/ENFORCED_BUDGETS.md):

1. the pre-named comparison: at each budget, the learned method and the free rule named on the
   half of the jobs that ended first, and their paired difference on the other half
   (``sweep.budget_table`` under the enforced budget);
2. the realized spend of every method at every budget on the scored jobs, its copies started in the
   order of its score (mean, the share of jobs above the budget, the 90th percentile of spend over
   budget) against the budget +10%; and (2b) each method's own rule under each cap on every job;
3. the capped oracle's headroom against the best method at each budget (it should be above);
4. Hadoop's caps as a reference policy: each method's own rule with at most max(10, 10% of the
   running tasks, 1% of all tasks) copies at once, on the scored jobs;
5. each method's cheapest point of its sweep that copies (uncapped, mean over all jobs): the methods
   with no such point below the smallest budget, and why (the report's sentence).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from stragglers.prediction.methods import FREE_RULES, is_learned  # noqa: E402
from stragglers.prediction.speculation import HADOOP_CAP  # noqa: E402
from stragglers.reports.budgets import cheapest_sentence  # noqa: E402
from stragglers.prediction.sweep import (  # noqa: E402
    BUDGETS, DEFAULT_POINT, NAMED_FREE_RULE, NAMED_LEARNED, ORACLE, budget_table, curve_table, earlier_by_trace,
)


def pct(v, d: int = 2) -> str:
    return "-" if pd.isna(v) else f"{v * 100:.{d}f}%"


def pp(d, lo, hi) -> str:
    return "-" if pd.isna(d) else f"{d * 100:+.1f} pp [{lo * 100:+.1f}, {hi * 100:+.1f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("warehouse", nargs="+")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-jobs", type=int, default=5)
    ap.add_argument("--write", type=Path, default=None, help="the Markdown page to write (replaced whole)")
    a = ap.parse_args()
    lines: list[str] = []

    def emit(text: str = "") -> None:
        lines.append(text)
        print(text)

    for warehouse in a.warehouse:
        tables(warehouse, a, emit)
    if a.write:
        root = Path(__file__).resolve().parents[2]
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=root).stdout.strip() or "unknown"
        args = " ".join(sys.argv[1:])
        intro = ["# Enforced budgets: the tables of a run", "",
                 f"Written by `python studies/operator/enforced_budgets.py {args}` at commit {commit} on "
                 f"{datetime.now(timezone.utc):%Y-%m-%d}; do not edit by hand. What each table is: the "
                 "script's docstring and docs/EVALUATION.md, \"Cost curves\". Each warehouse is a trace whose "
                 "operator's sweep ran every method (how to build one: docs/EVALUATION.md, \"What the budget "
                 "tables showed\")."]
        a.write.write_text("\n".join(intro + lines) + "\n", encoding="utf-8")


def tables(warehouse: str, a: argparse.Namespace, emit) -> None:
    """The five tables of each trace of ``warehouse``, through ``emit``."""
    con = duckdb.connect(warehouse, read_only=True)
    sweep = con.table("operator_sweep_outcomes").df()
    capped = con.table("operator_capped_outcomes").df()
    traces = sorted(set(capped["trace"]))
    earlier, choosing = earlier_by_trace(con, traces)
    sweep = sweep[sweep["trace"].isin(traces)]
    b = budget_table(sweep, earlier, FREE_RULES, a.min_jobs, n_boot=a.n_boot, seed=a.seed, choosing=choosing,
                     learned=is_learned, capped=capped)
    for trace in traces:
        t = b[b["trace"] == trace]
        chooses = choosing[trace]
        n_all = capped[capped["trace"] == trace]["job_id"].nunique()
        emit(f"\n## {trace}: {n_all} jobs; {len(chooses)} choose, {int(t['n_jobs'].max())} scored; "
             f"methods: {', '.join(sorted(t['method'].unique()))}\n")
        emit("### 1. The pre-named comparison (budget enforced)\n")
        emit("| budget | learned method (named) | its JCT cut, spend | free rule (named) | its JCT cut, spend "
             "| learned minus free rule [paired 95%] |")
        emit("|---|---|---|---|---|---|")
        for bud, g in t.groupby("budget", sort=True):
            m = g[g["named"] == NAMED_LEARNED]
            r = g[g["named"] == NAMED_FREE_RULE]
            if m.empty or r.empty:
                continue
            m, r = m.iloc[0], r.iloc[0]
            emit(f"| {bud * 100:g}% | {m.method} (first half {pct(m.choosing_jct_reduction, 1)}) | "
                 f"{pct(m.jct_reduction, 1)} for {pct(m.extra_machine_share)} | {r.method} (first half "
                 f"{pct(r.choosing_jct_reduction, 1)}) | {pct(r.jct_reduction, 1)} for {pct(r.extra_machine_share)} | "
                 f"{pp(m.named_diff, m.named_diff_lo, m.named_diff_hi)} |")
        emit("\n### 2. Realized spend on the scored jobs, copies in each method's score order (mean spend; "
             "share of jobs above the budget; 90th percentile of spend / budget)\n")
        wide = t.pivot_table(index="method", columns="budget", values="extra_machine_share")
        over = t.pivot_table(index="method", columns="budget", values="jobs_over_budget")
        p90 = t.pivot_table(index="method", columns="budget", values="extra_p90")
        n = t.pivot_table(index="method", columns="budget", values="n_jobs")
        emit("| method | " + " | ".join(f"{x * 100:g}%" for x in wide.columns) + " |")
        emit("|---|" + "---|" * len(wide.columns))
        for method in wide.index:
            emit(f"| {method} | " + " | ".join(
               f"{pct(wide.at[method, x])}; {over.at[method, x] / n.at[method, x] * 100:.0f}%; "
               f"{p90.at[method, x] / x:.2f}" for x in wide.columns) + " |")
        worst = (wide.div(pd.Series(wide.columns, index=wide.columns), axis=1)).max().max()
        emit(f"\nLargest mean spend over its budget: {worst:.2f} x the budget "
             f"({'within' if worst <= 1.1 else 'ABOVE'} +10%).")
        emit("\n### 2b. Each method's own rule under each cap, every job (mean spend; share of jobs above the "
             "budget; 90th percentile of spend / budget)\n")
        own = capped[(capped["trace"] == trace) & (capped["cap"] != HADOOP_CAP)
                     & capped["point"].isin([DEFAULT_POINT, "capped"])].copy()
        own["b"] = own["cap"].astype(float)
        own["over"] = own["extra_machine_share"] > own["b"] + 1e-12
        own["ratio"] = own["extra_machine_share"] / own["b"]
        g = own.groupby(["method", "b"]).agg(mean=("extra_machine_share", "mean"), over=("over", "mean"),
                                             p90=("ratio", lambda r: r.quantile(0.9)), jobs=("job_id", "nunique"))
        caps = sorted(own["b"].unique())
        emit("| method | " + " | ".join(f"{x * 100:g}%" for x in caps) + " |")
        emit("|---|" + "---|" * len(caps))
        for method in sorted(own["method"].unique()):
            emit(f"| {method} | " + " | ".join(
               f"{pct(g.at[(method, x), 'mean'])}; {g.at[(method, x), 'over'] * 100:.0f}%; {g.at[(method, x), 'p90']:.2f}"
                for x in caps) + " |")
        emit("\n### 3. The capped oracle's headroom against the best method at each budget\n")
        emit("| budget | oracle (capped) | best method there | its JCT cut | oracle - best |")
        emit("|---|---|---|---|---|")
        for bud, g in t.groupby("budget", sort=True):
            top = g.loc[g["jct_reduction"].idxmax()]
            emit(f"| {bud * 100:g}% | {pct(top.headroom, 1)} | {top.method} | {pct(top.jct_reduction, 1)} | "
                 f"{(top.headroom - top.jct_reduction) * 100:+.1f} pp |")
        emit("\n### 4. Hadoop's caps (each method's own rule; scored jobs)\n")
        h = capped[(capped["trace"] == trace) & (capped["cap"] == HADOOP_CAP)
                   & capped["point"].isin([DEFAULT_POINT, "capped"]) & ~capped["job_id"].isin(chooses)]
        hm = h.groupby("method")[["jct_reduction", "extra_machine_share", "n_copies"]].mean()
        emit("| method | JCT cut | extra machine time | copies per job |")
        emit("|---|---|---|---|")
        for method, r in hm.sort_values("jct_reduction", ascending=False).iterrows():
            emit(f"| {method} | {pct(r.jct_reduction, 1)} | {pct(r.extra_machine_share)} | {r.n_copies:.1f} |")
        emit("\n### 5. Each method's cheapest point that copies (uncapped, mean over all jobs)\n")
        c = curve_table(sweep[sweep["trace"] == trace])
        c = c[(c["method"] != ORACLE) & (c["extra_machine_share"] > 0)]
        cheap = c.loc[c.groupby("method")["extra_machine_share"].idxmin()].set_index("method")
        emit("| method | cheapest point that copies | its extra machine time | its JCT cut | below 0.5%? |")
        emit("|---|---|---|---|---|")
        for method, r in cheap.sort_values("extra_machine_share").iterrows():
            emit(f"| {method} | {r.point} | {pct(r.extra_machine_share)} | {pct(r.jct_reduction, 1)} | "
                 f"{'yes' if r.extra_machine_share <= min(BUDGETS) else 'no'} |")
        emit("\n" + (cheapest_sentence(curve_table(sweep[sweep["trace"] == trace]))
                     or "Every method has a point that copies within the smallest budget."))


if __name__ == "__main__":
    main()
