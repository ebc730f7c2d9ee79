#!/usr/bin/env bash
# The Dagster UI (webserver + daemon) on the project's shared instance.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help)
    cat <<'USAGE'
Usage: bash scripts/ui.sh [PORT]

Starts `dagster dev` (webserver and daemon) on DAGSTER_HOME=./dagster_home, the
instance the CLI runs write to, so their history shows in the UI. Opens on
http://127.0.0.1:PORT (default 3000). Stop with Ctrl-C.
USAGE
    exit 0 ;;
esac
port="${1:-3000}"
source scripts/env.sh
[ -x .venv/bin/dagster ] || bash scripts/setup.sh
echo "Dagster UI: http://127.0.0.1:$port  (Ctrl-C stops it; instance $DAGSTER_HOME)"
# --log-level warning: the daemon's run queue logs "N runs are currently in progress ...
# won't launch more" at INFO on every tick (every few seconds) while a run holds the single
# run slot (dagster.yaml: one DuckDB writer), hundreds of lines per long run; warnings and
# errors still show, and every run's own logs are in the UI.
exec .venv/bin/dagster dev -p "$port" -h 127.0.0.1 --log-level warning
