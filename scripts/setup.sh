#!/usr/bin/env bash
# Create .venv with Python 3.11 and install the project (editable) with its test extras.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help)
    echo "Usage: bash scripts/setup.sh"
    echo
    echo "Creates .venv (Python 3.11, or \$PYTHON) and installs the project editable with its"
    echo "test extras (pip install -e '.[test]'). Re-running it only installs what changed."
    exit 0 ;;
esac
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PY" --version 2>&1)"
  "$PY" -m venv .venv
fi
echo "setup: installing the project into .venv (about 1 minute the first time on an idle machine, docs/TIMINGS.md; seconds after)"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
# The report's browser check (tests/test_product.py) and scripts/screenshots.py open report.html in headless
# Chromium (Debian package chromium, not a Python package): installed where this can (root and apt-get), as
# .ci/run does; elsewhere the check skips, saying so in one line
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium (the report's browser check)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
      || echo "setup: could not install chromium; the report's browser check will skip"
  else
    echo "setup: chromium not found and not installable here (needs root and apt-get): the report's browser"
    echo "       check will skip; install it with: apt-get install chromium"
  fi
fi
# The Spark cluster tests (tests/spark_cluster.py) start Java daemons: pyspark is installed above,
# Java is not a Python package
if ! command -v java >/dev/null 2>&1; then
  echo "setup: java not found: the Spark cluster tests will skip; install Java 17+ to run them:"
  echo "       apt-get install openjdk-17-jre-headless"
fi
