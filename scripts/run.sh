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
           reference rules (flag all, wait for tau, Spark < 4.0 and >= 4.0 speculation,
           the KM survival rule, the oracle), under the paper's and the operator's protocol
        -> comparison report (tables, figures, report.md, report.html)
and ends with a summary: what ran, how long, where the warehouse, the report
and the data docs are, the headline numbers and the next commands.

Environment (see README "Settings"): NURD_DATA_DIR (default data), NURD_TRACE
(default synthetic), NURD_TRACE_PARTS, NURD_SEED, DAGSTER_HOME (default
./dagster_home, shared with the UI). The same runs without this script:
  .venv/bin/dagster asset materialize -m pipeline --select '*nurd_eval'
  .venv/bin/dagster asset materialize -m pipeline --select baseline_eval --partition flag_all
  (the same for wait_for_tau, spark_speculation, spark4_speculation, km_survival and oracle)
  .venv/bin/dagster asset materialize -m pipeline --select completion_times,operator_budgets,comparison_tables
USAGE
}
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") ;;
  *) echo "run.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
esac
bash scripts/setup.sh
exec bash scripts/main_job.sh
