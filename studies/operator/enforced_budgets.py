"""The budget enforced through the one engine: the named comparison, the realized spend, the headroom,
Hadoop's caps, Spark as Spark runs it.

    python -m studies.operator.enforced_budgets WAREHOUSE [WAREHOUSE ...] [--write docs/ENFORCED_BUDGETS.md]

Reads warehouses whose operator's evaluations ran (table ``operator_capped_outcomes``: every point of
every method under every cap, stragglers/prediction/engine) and prints, per trace, in Markdown
(docs/EVALUATION.md, "Cost curves"; ``--write`` also writes it, with the command, the commit and the
date, as the page the docs quote, docs/ENFORCED_BUDGETS.md), every number from the tables the asset
operator_budgets makes (stragglers/reports/compute/budget_tables.py, with the run's settings: NURD_N_BOOT,
NURD_SEED, the history and warm-up of stragglers/prediction/verdicts/verdict.py):

1. the comparison named before it is scored: at each budget, the learned method and the free rule
   named on the jobs that ended before each scored job started (or no winner), their difference on
   the scored jobs, its interval at Holm's level over every budget of every trace of the warehouses
   given (one family), its minimum detectable effect and the verdict;
2. the realized spend of each method's own rule under each budget, every job: the mean spend over
   the budget (flag-all, which asks a copy of every running task, shows whether the cap binds), the
   share of jobs above the budget, the 90th percentile of spend over budget;
3. each method tuned on earlier jobs on the scored jobs, against the headroom (per job the best of the
   oracle and of every point of every policy under the same cap at the same checks) and the oracle
   alone; how often some policy beat the oracle;
4. Hadoop's caps as a reference policy (each method's own rule, scored jobs);
5. Spark as Spark runs it (no cap: its setting matched within the budget on earlier jobs, changed
   only where named), the spend it realizes against the budget it was matched on.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd

from stragglers.prediction.verdicts.budgets import ENFORCED, SPARK_AS_RUN, budget_tables
from stragglers.prediction.replay.earlier import earlier_jobs, job_times
from stragglers.prediction.engine.policies import DEFAULT_POINT, ORACLE
from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.prediction.verdicts.tuning import BUDGETS
from stragglers.reports.compute.budget_tables import reads_labels
from stragglers.settings import EvaluationSettings, Settings

ROOT = Path(__file__).resolve().parents[2]


def pct(v, d: int = 2) -> str:
    return "-" if v is None or pd.isna(v) else f"{v * 100:.{d}f}%"


def pp(v, d: int = 2) -> str:
    return "-" if v is None or pd.isna(v) else f"{v * 100:+.{d}f} pp"


def trace_section(trace: str, capped: pd.DataFrame, budgets: pd.DataFrame, comp: pd.DataFrame) -> list[str]:
    out = []
    n_jobs = capped["job_id"].nunique()
    methods = sorted(capped["method"].unique())
    first = comp.iloc[0]
    out += [f"## {trace}: {n_jobs} jobs through the engine; {int(first.n_scored)} scored ({first.scheme}, each named "
            f"on the {int(first.n_choosing_min)} to {int(first.n_choosing_max)} jobs that ended before it started, "
            f"median {int(first.n_choosing_median)}); methods: {', '.join(methods)}", ""]
    out += ["### 1. The comparison named before it is scored", "",
            "| budget | learned method named now | free rule named now | learned minus free rule [Holm 95%] "
            "| detectable (80% power) | Holm p | verdict |", "|---|---|---|---|---|---|---|"]
    for c in comp.sort_values("budget").itertuples(index=False):
        out.append(f"| {c.budget * 100:g}% | {c.learned_words} (named for {int(c.learned_named_jobs)} of "
                   f"{int(c.n_scored)}) | {c.free_rule_words} (named for {int(c.free_rule_named_jobs)}) | "
                   f"{pp(c.diff)} [{pp(c.diff_lo)}, {pp(c.diff_hi)}] | {pp(c.diff_mde)} | {c.diff_p_holm:.2f} | "
                   f"{c.verdict} |")
    own = capped[capped["point"].isin([DEFAULT_POINT, "capped"]) & ~capped["cap"].isin(["hadoop", "none"])].copy()
    own["b"] = own["cap"].astype(float)
    own["ratio"] = own["extra_machine_share"] / own["b"]
    g = own.groupby(["method", "b"]).agg(ratio=("ratio", "mean"), over=("ratio", lambda r: (r > 1 + 1e-9).mean()),
                                         p90=("ratio", lambda r: r.quantile(0.9)))
    caps = sorted(own["b"].unique())
    out += ["", "### 2. The realized spend of each method's own rule under each budget, every job (mean spend / "
                "budget; share of jobs above it; 90th percentile of spend / budget)", "",
            "| method | " + " | ".join(f"{x * 100:g}%" for x in caps) + " |", "|---|" + "---|" * len(caps)]
    for method in sorted(own["method"].unique()):
        out.append(f"| {method} | " + " | ".join(
            f"{g.at[(method, x), 'ratio']:.2f}; {g.at[(method, x), 'over'] * 100:.0f}%; {g.at[(method, x), 'p90']:.2f}"
            for x in caps) + " |")
    worst = g.drop(index=ORACLE, level=0, errors="ignore")["ratio"].max()
    flag_all = [g.at[("flag_all", x), "ratio"] for x in caps] if "flag_all" in own["method"].values else []
    out += ["", f"Largest mean spend of a policy over its budget: {worst:.2f} x (the done-when: at most 1.1). "
            + (f"Flag-all, a copy of every running task wanted: {', '.join(f'{r:.2f}' for r in flag_all)} x the "
               f"budget at {', '.join(f'{x * 100:g}%' for x in caps)} (the done-when: 0.7 to 1.1)." if flag_all else "")]
    enforced = budgets[budgets["cap_mode"] == ENFORCED]
    out += ["", "### 3. Each method tuned on earlier jobs (scored jobs) against the headroom", "",
            "| budget | headroom (oracle and every policy) | oracle | best tuned policy | its cut [95%] | its spend "
            "| headroom - best | jobs some policy beat the oracle |", "|---|---|---|---|---|---|---|---|"]
    for b, at in enforced.groupby("budget", sort=True):
        ok = at[~at["reads_labels"].astype(bool)]
        top = ok.loc[ok["jct_reduction"].idxmax()]
        out.append(f"| {b * 100:g}% | {pct(top.headroom, 1)} | {pct(top.oracle, 1)} | {top.method} ({top.point_mode}) | "
                   f"{pct(top.jct_reduction, 1)} [{pct(top.jct_lo, 1)}, {pct(top.jct_hi, 1)}] | "
                   f"{pct(top.extra_machine_share)} | {pp(top.headroom - top.jct_reduction, 1)} | "
                   f"{int(top.oracle_beaten_jobs)} of {int(top.n_jobs)} |")
    mean_at = own.groupby(["b", "method"])["jct_reduction"].mean().unstack()
    above = (mean_at.drop(columns=ORACLE, errors="ignore").max(axis=1) > mean_at.get(ORACLE, pd.Series(dtype=float)) + 1e-12)
    out += ["", "Every job, each method's own rule: the oracle's mean cut is "
            + ("at or above every policy's at every budget." if not above.any() else
               "below some policy's at " + ", ".join(f"{x * 100:g}%" for x in above[above].index) + ".")]
    h = capped[(capped["cap"] == "hadoop") & capped["point"].isin([DEFAULT_POINT, "capped"])]
    hm = h.groupby("method")[["jct_reduction", "extra_machine_share", "n_copies"]].mean()
    out += ["", "### 4. Hadoop's caps (each method's own rule; every job)", "",
            "| method | JCT cut | extra machine time | copies per job |", "|---|---|---|---|"]
    for method, r in hm.sort_values("jct_reduction", ascending=False).iterrows():
        out.append(f"| {method} | {pct(r.jct_reduction, 1)} | {pct(r.extra_machine_share)} | {r.n_copies:.1f} |")
    run = budgets[budgets["cap_mode"] == SPARK_AS_RUN]
    if len(run):
        out += ["", "### 5. Spark as Spark runs it (no cap; its setting matched within the budget on earlier jobs, "
                    "changed only where named; scored jobs)", "",
                "| budget | setting most applied | cut [95%] | spend | spend / budget | jobs above the budget |",
                "|---|---|---|---|---|---|"]
        for r in run.sort_values("budget").itertuples(index=False):
            out.append(f"| {r.budget * 100:g}% | {r.point_mode} | {pct(r.jct_reduction, 1)} [{pct(r.jct_lo, 1)}, "
                       f"{pct(r.jct_hi, 1)}] | {pct(r.extra_machine_share)} | {r.spend_over_budget:.2f} | "
                       f"{int(r.jobs_over_budget)} of {int(r.n_jobs)} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.operator.enforced_budgets",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("warehouse", nargs="+")
    ap.add_argument("--write", type=Path, default=None, help="the Markdown page to write (replaced whole)")
    a = ap.parse_args()
    s = Settings.from_env()
    # one family: every budget of every trace of every warehouse given (their traces are distinct)
    parts, times = [], {}
    for path in a.warehouse:
        con = duckdb.connect(path, read_only=True)
        capped = con.table("operator_capped_outcomes").order("ALL").df()
        parts.append(capped)
        times |= {t: job_times(con, t, "operator_tasks") for t in capped["trace"].unique()}
        con.close()
    capped = pd.concat(parts, ignore_index=True)
    budgets, comparisons = budget_tables(capped, times, {t: earlier_jobs(x) for t, x in times.items()}, FREE_RULES,
                                         is_learned, reads_labels, EvaluationSettings.of(s).history_min_jobs,
                                         n_boot=s.n_boot, seed=s.seed)
    lines = []
    for trace in sorted(capped["trace"].unique()):
        lines += trace_section(trace, capped[capped["trace"] == trace], budgets[budgets["trace"] == trace],
                               comparisons[comparisons["trace"] == trace]) + [""]
    text = "\n".join(lines)
    print(text)
    if a.write:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        command = "python -m studies.operator.enforced_budgets " + " ".join(a.warehouse) + f" --write {a.write}"
        head = ["# Enforced budgets: the tables of a run", "",
                f"Written by `{command}` at commit {commit} on {datetime.now(timezone.utc):%Y-%m-%d}; do not edit by "
                f"hand. What each table is: the script's docstring and docs/EVALUATION.md, \"Cost curves\". Each "
                f"warehouse is a trace whose operator's evaluations ran (how to build one: docs/EVALUATION.md, \"What "
                f"the budget tables showed\"). Budgets: {', '.join(f'{b * 100:g}%' for b in BUDGETS)} of the jobs' "
                f"machine time. The Holm family of section 1 is every budget of every trace on this page.", ""]
        a.write.write_text("\n".join(head) + text + "\n")


if __name__ == "__main__":
    sys.exit(main())
