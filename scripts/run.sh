#!/usr/bin/env bash
# README command 1: set up, run the main job on the embedded default trace, print a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
  cat <<'USAGE'
Usage: bash scripts/run.sh [--help]

Sets up .venv (scripts/setup.sh), then runs the main job on the configured trace
(default: the embedded synthetic trace, generated locally):
  trace -> DuckDB warehouse (validated by Great Expectations checks)
        -> NURD, NURD-NC and GBTR replayed online on every selected job, and the
           three free reference rules (flag all, wait for tau, Spark speculation)
        -> comparison report (tables, figures, report.md, report.html)
and ends with a summary: what ran, how long, where the warehouse, the report
and the data docs are, the headline numbers and the next commands.

Environment (see README "Settings"): NURD_DATA_DIR (default data), NURD_TRACE
(default synthetic), NURD_TRACE_PARTS, NURD_SEED, DAGSTER_HOME (default
./dagster_home, shared with the UI). The same runs without this script:
  .venv/bin/dagster asset materialize -m pipeline --select '*nurd_eval'
  .venv/bin/dagster asset materialize -m pipeline --select baseline_eval --partition flag_all
  (the same for spark_speculation and wait_for_tau)
  .venv/bin/dagster asset materialize -m pipeline --select comparison_tables
USAGE
}
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") ;;
  *) echo "run.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
esac
started=$SECONDS
since=$(date +%s)
bash scripts/setup.sh
source scripts/env.sh
materialize() { .venv/bin/dagster asset materialize -m pipeline "$@"; }
materialize --select '*nurd_eval'
# the free reference rules (partitions of baseline_eval, named by the method registry): cheap,
# and the summary compares NURD with them; one run each (--partition-range takes a contiguous range)
for rule in $(.venv/bin/python -c "from stragglers.prediction.methods import REFERENCE_RULES; print(*REFERENCE_RULES)"); do
  materialize --select baseline_eval --partition "$rule"
done
materialize --select comparison_tables
.venv/bin/python scripts/summary.py --elapsed $((SECONDS - started)) --since "$since"
