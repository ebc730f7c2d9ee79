"""Print what the last run did and what it shows (the end of README command 1).

Usage: python scripts/summary.py [--elapsed SECONDS] [--since EPOCH_SECONDS]

Reads the runs of the Dagster instance ($DAGSTER_HOME) for what ran, and
the warehouse ($NURD_DATA_DIR/warehouse.duckdb, read-only) and the report
for the numbers (stragglers.reports.sections.story): the answer first, word for word
the box at the top of report.html (its table answer.csv), then where
everything is. Changes nothing.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


from stragglers.advice.spark import ANSWER_DIR, DEFAULT_OUT, REPORT_SUFFIX
from stragglers.reports.sections.story import terminal_summary

NEXT_COMMANDS = [
    ("UI", "bash scripts/ui.sh   # http://127.0.0.1:3000, this run's history included"),
    ("baselines", "bash scripts/baselines.sh   # the 20 rivals of Table 3, the survival family (2) and the 6 reference rules (28 partitions), then the report again"),
    ("real trace", "NURD_TRACE=google_2011 NURD_TRACE_PARTS=10 bash scripts/run.sh"),
    ("tests", "bash scripts/test.sh"),
]


def runs_since(since: float | None) -> str:
    """'N runs (success): A assets materialized (...), C of D data checks passed' for the runs
    started at or after ``since`` (epoch seconds; default: the newest run only)."""
    if not os.environ.get("DAGSTER_HOME"):
        return ""
    import dagster as dg

    instance = dg.DagsterInstance.get()
    runs = instance.get_runs(limit=50)
    if since is not None:
        records = instance.get_run_records(dg.RunsFilter(run_ids=[r.run_id for r in runs]))
        started = {r.dagster_run.run_id: (r.start_time or r.create_timestamp.timestamp()) for r in records}
        runs = [r for r in runs if started.get(r.run_id, 0) >= since - 1]
    else:
        runs = runs[:1]
    if not runs:
        return ""
    assets: list[str] = []
    passed = total = 0
    for run in reversed(runs):              # oldest first
        for r in instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records:
            event = r.event_log_entry.dagster_event
            key = event.asset_key.to_user_string()
            part = event.partition
            assets.append(f"{key}[{part}]" if part else key)
        for r in instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records:
            total += 1
            passed += bool(r.event_log_entry.dagster_event.event_specific_data.passed)
    statuses = sorted({r.status.value.lower() for r in runs})
    return (f"{len(runs)} run{'s' if len(runs) > 1 else ''} ({', '.join(statuses)}): {len(assets)} materializations "
            f"({', '.join(assets)}), {passed} of {total} data checks passed")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elapsed", type=float, default=None, help="seconds the whole command took")
    ap.add_argument("--since", type=float, default=None,
                    help="summarize the runs started at or after this time (epoch seconds); default: the last run")
    args = ap.parse_args()
    data_dir = Path(os.environ.get("NURD_DATA_DIR") or "data")
    conf = data_dir / ANSWER_DIR / DEFAULT_OUT
    print(terminal_summary(data_dir, elapsed_s=args.elapsed, ran=runs_since(args.since), next_commands=NEXT_COMMANDS,
                           answers=[("spark conf", conf), ("its report", conf.with_name(conf.name + REPORT_SUFFIX))]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
