"""The re-execution table (stragglers/prediction/copies/reexecution.py) as Markdown: per trace, the real
pairs beside the copy model (and the generator's model on the embedded trace), with the rerun tasks
left out counted."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stragglers.reports.page.files import md, write_text

INTRO = ("Tasks that FINISHed, were scheduled again and FINISHed again on another machine: the same work "
         "run again elsewhere, which is what a speculative copy gets. First life as task_lifecycle defines "
         "it, second life the next SCHEDULE -> FINISH; latencies relative to the job's median over its timed "
         "first lives; a straggler is a life at or above the job's latency quantile (the labels' tau). "
         "Intervals: 95% percentile bootstrap over jobs. The copy model is the simulator's (a copy's latency "
         "is a fresh draw from the job's latencies), replayed on the same pairs over 10 seeds. On a generated "
         "trace, the generator's model runs every finished task again elsewhere: its data, computation or I/O "
         "skew goes with its work; the machine, contention, the queueing wait and its noise (correlation 0 "
         "between lives, fitted on the real excerpt's earlier jobs) stay behind.")


def view(summary: pd.DataFrame) -> pd.DataFrame:
    """One readable row per (trace, source): each statistic with its interval in one cell."""
    def cell(r, name, fmt):
        if pd.isna(r[name]):
            return "-"
        return f"{r[name]:{fmt}} [{r[name + '_lo']:{fmt}}, {r[name + '_hi']:{fmt}}]"
    return pd.DataFrame({
        "trace": summary["trace"], "source": summary["source"],
        "pairs": summary["n_pairs"], "jobs": summary["n_jobs"],
        "corr of relative log-latencies": [cell(r, "corr", ".2f") for _, r in summary.iterrows()],
        "P(2nd straggles | 1st did)": [cell(r, "p_second_given_first", ".3f") for _, r in summary.iterrows()],
        "P(2nd straggles)": [cell(r, "base_rate", ".3f") for _, r in summary.iterrows()],
        "1st lives straggling": [("-" if pd.isna(v) else f"{int(v)}") for v in summary["n_first_stragglers"]],
        "median 2nd / job median": [("-" if pd.isna(v) else f"{v:.3f}") for v in summary["median_second_relative"]],
    })


def write_report(out_dir: Path, trace: str, summary: pd.DataFrame, counts: dict[str, int]) -> Path:
    left = pd.DataFrame([{"status": k, "rerun tasks": v} for k, v in counts.items()])
    return write_text(Path(out_dir) / f"reexecutions_{trace}.md",
                      f"# What a copy buys: re-executions on `{trace}`\n\n{INTRO}\n\n{md(view(summary))}\n\n"
                      f"## Rerun tasks, pairs and left out (sql/reexecution_pairs.sql)\n\n{md(left)}\n")
