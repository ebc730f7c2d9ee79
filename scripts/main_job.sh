#!/usr/bin/env bash
# The main job of README command 1, without the setup: the chain, NURD, the reference rules, the report,
# then the summary. PY (default .venv/bin/python) is the project's Python.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help)
    cat <<'USAGE'
Usage: bash scripts/main_job.sh

README command 1 without its setup (run scripts/setup.sh once first): the chain
up to NURD's evaluation, the reference rules, the simulations, the budgets and
the report, then the summary. What each step is: scripts/run.sh --help.
PY (default .venv/bin/python) is the project's Python.
USAGE
    exit 0 ;;
esac
PY="${PY:-.venv/bin/python}"
started=$SECONDS
since=$(date +%s)
source scripts/env.sh
# the chain to NURD's evaluation; the free reference rules (partitions of baseline_eval, named by the
# method registry): cheap, and the summary compares NURD with them, one run each (--partition-range
# takes a contiguous range, and they are not); then the simulations, the budgets and the report.
# The same runs as `dagster asset materialize -m pipeline --select ...` one by one, launched from one
# Python process so that Dagster and the project load once.
runs=('*nurd_eval')
for rule in $("$PY" -c "from stragglers.prediction.methods import REFERENCE_RULES; print(*REFERENCE_RULES)"); do
  runs+=("baseline_eval@$rule")
done
runs+=('completion_times,operator_budgets,comparison_tables')
"$PY" scripts/materialize.py "${runs[@]}"
# on Spark event logs (not the README's command 1), the answer's files too: spark-defaults.conf and its
# report under NURD_DATA_DIR/spark
if [ "$("$PY" -c "from stragglers.settings import Settings; print(Settings.from_env().format.layout)")" = spark ]; then
  "$PY" scripts/materialize.py spark_speculation
fi
"$PY" scripts/summary.py --elapsed $((SECONDS - started)) --since "$since"
