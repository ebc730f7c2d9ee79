#!/usr/bin/env bash
# README command 1: set up, then run the main job on the embedded default trace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/dagster_home}"
.venv/bin/dagster asset materialize -m pipeline --select '*nurd_eval'
