#!/usr/bin/env bash
# README command 2: set up, then run the test suite (arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help)
    cat <<'USAGE'
Usage: bash scripts/test.sh [PYTEST ARGS...]

Sets up .venv (scripts/setup.sh), then runs the test suite with pytest; any
argument is passed to pytest, e.g. bash scripts/test.sh tests/test_reports.py -x
Tests that need the real trace excerpt (NURD_REALDATA_DIR) or Chromium skip
with the reason when those are absent.
USAGE
    exit 0 ;;
esac
bash scripts/setup.sh
source scripts/env.sh
.venv/bin/python -m pytest -q "$@"
