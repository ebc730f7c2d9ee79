#!/usr/bin/env bash
# The 28 partitions of baseline_eval (the paper's 20 baselines, the survival family and the 6 reference rules) in one run,
# then the comparison report and the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
  cat <<'USAGE'
Usage: bash scripts/baselines.sh [FIRST...LAST]

Evaluates the baselines (partitions of asset baseline_eval, the method names in
alphabetical order, default the range abod...xgbod = all 27: the paper's 20
baselines, survival_job and the reference rules flag_all, km_survival, oracle, spark_speculation,
spark4_speculation, wait_for_tau) on the trace the
main job prepared (run scripts/run.sh first), in one run, then rebuilds the
comparison report and prints the summary. Expect tens of minutes on 2 cores
(docs/TIMINGS.md has the measured times); progress is logged per
method and every 10 jobs. One method: bash scripts/baselines.sh tobit...tobit
USAGE
}
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
esac
range="${1:-abod...xgbod}"
started=$SECONDS
source scripts/env.sh
[ -x .venv/bin/dagster ] || bash scripts/setup.sh
.venv/bin/dagster asset materialize -m pipeline --select baseline_eval --partition-range "$range"
.venv/bin/dagster asset materialize -m pipeline --select completion_times,operator_budgets,comparison_tables
.venv/bin/python scripts/summary.py --elapsed $((SECONDS - started))
