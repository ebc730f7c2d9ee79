#!/usr/bin/env bash
# README command 2: set up, then run the test suite (arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help)
    cat <<'USAGE'
Usage: bash scripts/test.sh [PYTEST ARGS...]

Sets up .venv (scripts/setup.sh), then runs the test suite with pytest, its
test files spread over one worker process per core (pytest-xdist, -n auto
--dist loadfile: a file's tests, and the warehouse its fixtures build, stay on
one worker; the slowest files first, tests/conftest.py SLOWEST_FILES). Any argument is passed to pytest, e.g.
  bash scripts/test.sh tests/test_reports.py -x
NURD_TEST_WORKERS=N sets the number of workers (0: no workers, in this process);
with workers, each runs its BLAS / OpenMP libraries on one thread (OMP_NUM_THREADS=1
unless set).
PY=PYTHON runs them with that Python instead of .venv's, without the setup
(benchmarks/timings.py measures the tests so after its own install).
Tests that need the real trace excerpt (NURD_REALDATA_DIR) or Chromium skip
with the reason when those are absent.
USAGE
    exit 0 ;;
esac
if [ -z "${PY:-}" ]; then
  bash scripts/setup.sh
fi
PY="${PY:-.venv/bin/python}"
source scripts/env.sh
# A worker is one core's process: its BLAS and OpenMP threads (numpy's OpenBLAS, scikit-learn,
# XGBoost) are kept to one, as the pipeline's own replay workers keep theirs (threadpool_limits).
# Two workers each with a thread per core busy-wait against each other: measured on 2 cores, two
# concurrent runs of the future test's world and CoxPH replays took 351 CPU s and 183 s, 139 and 75 s
# with one thread each.
if [ "${NURD_TEST_WORKERS:-auto}" != 0 ]; then
  export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
fi
# every test keeps its files, instances and ports to itself (tmp_path, an ephemeral Dagster
# instance, port 0): the files can run side by side. The files go to the workers in the order
# tests/conftest.py collects them (the slowest first), not by their number of tests.
"$PY" -m pytest -q -n "${NURD_TEST_WORKERS:-auto}" --dist loadfile --no-loadscope-reorder "$@"
