"""Print what the last run did and what it shows (the end of README command 1).

Usage: python scripts/summary.py [--elapsed SECONDS]

Reads the last run of the Dagster instance ($DAGSTER_HOME) for what ran, and
the warehouse ($NURD_DATA_DIR/warehouse.duckdb, read-only) and the report
for the numbers (stragglers.reports.story). Changes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stragglers.reports.story import terminal_summary  # noqa: E402

NEXT_COMMANDS = [
    ("UI", "bash scripts/ui.sh   # http://127.0.0.1:3000, this run's history included"),
    ("baselines", "bash scripts/baselines.sh   # the 20 rivals of Table 3, then the report again"),
    ("real trace", "NURD_TRACE=google_2011 NURD_TRACE_PARTS=10 bash scripts/run.sh"),
    ("tests", "bash scripts/test.sh"),
]


def last_run() -> str:
    """'run <id> <status>: N assets materialized, M checks passed (K failed)' of the newest run."""
    if not os.environ.get("DAGSTER_HOME"):
        return ""
    import dagster as dg

    instance = dg.DagsterInstance.get()
    runs = instance.get_runs(limit=1)
    if not runs:
        return ""
    run = runs[0]
    mats = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    checks = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
    passed = sum(1 for r in checks if r.event_log_entry.dagster_event.event_specific_data.passed)
    assets = [r.event_log_entry.dagster_event.asset_key.to_user_string() for r in mats]
    return (f"run {run.run_id[:8]} ({run.status.value.lower()}): {len(assets)} assets materialized "
            f"({', '.join(assets)}), {passed} of {len(checks)} data checks passed")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elapsed", type=float, default=None, help="seconds the whole command took")
    args = ap.parse_args()
    data_dir = Path(os.environ.get("NURD_DATA_DIR") or "data")
    print(terminal_summary(data_dir, elapsed_s=args.elapsed, ran=last_run(), next_commands=NEXT_COMMANDS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
