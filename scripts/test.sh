#!/usr/bin/env bash
# README command 2: set up, then run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export GX_ANALYTICS_ENABLED=false DAGSTER_DISABLE_TELEMETRY=1
.venv/bin/python -m pytest -q "$@"
