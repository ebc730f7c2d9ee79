#!/usr/bin/env bash
# The done-when check of the cluster engine (README "Run on a cluster"): the same assets
# materialized twice on the embedded trace, once on local processes and once on a Dask cluster
# started by hand (a `dask scheduler` and two `dask worker` processes on 127.0.0.1), then the
# result tables of the two DuckDB files compared row for row (usage: --help).
#
# UPSTREAM=copy is the default because the two runs then replay the same inputs and any difference
# is the engine's. With UPSTREAM=rebuild, DuckDB's parallel float sums make checkpoint_features
# differ in the last bits between two builds (relative 1e-15), which a method sensitive to its
# inputs (Tobit's L-BFGS-B) can turn into different flags (docs/BENCHMARKS.md).
set -euo pipefail
case "${1:-}" in
  -h|--help)
    cat <<'USAGE'
Usage: bash scripts/cluster_check.sh [PORT] [SELECTION...]

Materializes the same assets twice on the embedded trace, once on local processes and
once on a Dask cluster it starts on 127.0.0.1:PORT (default 8797: a scheduler and two
workers), then compares the result tables of the two DuckDB files row for row.
Each SELECTION is one `dagster asset materialize` call, "ASSETS" or
"ASSETS@PARTITION_RANGE" (default: '*nurd_eval', baseline_eval@flag_all...hbos and
baseline_eval@spark_speculation...wrangler). Run from the project directory.

Environment: PYTHON (default .venv/bin/python); CHECK_DIR (default
/tmp/nurd-cluster-check, emptied first); UPSTREAM=copy (default: the Dask run
evaluates a copy of the local warehouse) or rebuild; REUSE_LOCAL=1 keeps an
earlier local run in CHECK_DIR.
USAGE
    exit 0 ;;
  -*) echo "cluster_check.sh: unknown option '$1' (PORT is a number; see --help)" >&2; exit 2 ;;
esac
PORT=${1:-8797}
shift || true
SELECTIONS=("$@")
[ ${#SELECTIONS[@]} -gt 0 ] || SELECTIONS=('*nurd_eval' 'baseline_eval@flag_all...hbos'
                                          'baseline_eval@spark_speculation...wrangler')
PYTHON=${PYTHON:-.venv/bin/python}
BIN=$(dirname "$PYTHON")
CHECK_DIR=${CHECK_DIR:-/tmp/nurd-cluster-check}
export GX_ANALYTICS_ENABLED=false DAGSTER_DISABLE_TELEMETRY=1
# the workers import this checkout, whatever checkout the environment has installed
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
UPSTREAM=${UPSTREAM:-copy}
if [ -n "${REUSE_LOCAL:-}" ] && [ -f "$CHECK_DIR/local/data/warehouse.duckdb" ]; then
    rm -rf "$CHECK_DIR/dask"
else
    rm -rf "$CHECK_DIR" && mkdir -p "$CHECK_DIR"
fi

materialize() {   # $1 = run name; the rest of the environment says where the replays run
    mkdir -p "$CHECK_DIR/$1/home"
    cp dagster_home/dagster.yaml "$CHECK_DIR/$1/home/"
    for sel in "${SELECTIONS[@]}"; do
        local assets=${sel%%@*} range=()
        [ "$1" = dask ] && [ "$UPSTREAM" = copy ] && assets=${assets#\*}
        [[ $sel == *@* ]] && range=(--partition-range "${sel#*@}")
        echo "== $1: $assets ${range[*]}"
        NURD_DATA_DIR="$CHECK_DIR/$1/data" DAGSTER_HOME="$CHECK_DIR/$1/home" \
            "$PYTHON" -m dagster asset materialize -m pipeline --select "$assets" "${range[@]}" \
            > "$CHECK_DIR/$1/materialize.log" 2>&1 || { tail -30 "$CHECK_DIR/$1/materialize.log"; exit 1; }
        grep -o "replayed [0-9]*/[0-9]* jobs.*\|engine[^,]*dask[^,]*" "$CHECK_DIR/$1/materialize.log" | tail -2 || true
    done
}

started=$(date +%s)
if [ -z "${REUSE_LOCAL:-}" ] || [ ! -f "$CHECK_DIR/local/data/warehouse.duckdb" ]; then
    NURD_DASK_ADDRESS= materialize local
    echo "local run: $(( $(date +%s) - started )) s"
fi
if [ "$UPSTREAM" = copy ]; then
    mkdir -p "$CHECK_DIR/dask" && cp -r "$CHECK_DIR/local/data" "$CHECK_DIR/dask/data"
    # the copy without the local run's results, so that the evaluations run again (not "up to date")
    "$PYTHON" - "$CHECK_DIR/dask/data/warehouse.duckdb" <<'EOF'
import sys, duckdb
with duckdb.connect(sys.argv[1]) as con:
    con.execute("DELETE FROM table_settings WHERE table_name LIKE 'evaluation:%'")
    for table in ("predictions", "job_metrics", "f1_over_time", "method_fallbacks", "evaluation_runs"):
        con.execute(f"DELETE FROM {table}")
EOF
fi

"$BIN/dask" scheduler --host 127.0.0.1 --port "$PORT" --no-dashboard > "$CHECK_DIR/scheduler.log" 2>&1 &
SCHEDULER=$!
sleep 3
"$BIN/dask" worker "tcp://127.0.0.1:$PORT" --nworkers 1 --nthreads 1 --no-dashboard > "$CHECK_DIR/worker1.log" 2>&1 &
WORKER1=$!
"$BIN/dask" worker "tcp://127.0.0.1:$PORT" --nworkers 1 --nthreads 1 --no-dashboard > "$CHECK_DIR/worker2.log" 2>&1 &
WORKER2=$!
trap 'kill $WORKER1 $WORKER2 $SCHEDULER 2>/dev/null; wait 2>/dev/null' EXIT
"$PYTHON" - "$PORT" <<'EOF'
import sys, time
from distributed import Client
with Client(f"tcp://127.0.0.1:{sys.argv[1]}", timeout=60) as c:
    c.wait_for_workers(2, timeout=120)
    print("cluster:", ", ".join(sorted(c.scheduler_info()["workers"])))
EOF
started=$(date +%s)
NURD_DASK_ADDRESS="tcp://127.0.0.1:$PORT" materialize dask
echo "Dask run: $(( $(date +%s) - started )) s"

"$PYTHON" - "$CHECK_DIR" <<'EOF'
import sys, duckdb
d = sys.argv[1]
con = duckdb.connect()
con.execute(f"ATTACH '{d}/local/data/warehouse.duckdb' AS a (READ_ONLY)")
con.execute(f"ATTACH '{d}/dask/data/warehouse.duckdb' AS b (READ_ONLY)")
ok = True
# job_metrics.seconds is each job's wall time (it differs between any two runs)
for table, cols in (("predictions", "*"), ("job_metrics", "* EXCLUDE (seconds)"), ("f1_over_time", "*"),
                    ("method_fallbacks", "*")):
    n = con.execute(f"SELECT count(*) FROM a.{table}").fetchone()[0]
    methods = con.execute(f"SELECT string_agg(DISTINCT method, ',' ORDER BY method) FROM a.{table}").fetchone()[0]
    diff = con.execute(f"SELECT (SELECT count(*) FROM (SELECT {cols} FROM a.{table} EXCEPT ALL "
                       f"SELECT {cols} FROM b.{table})) + (SELECT count(*) FROM (SELECT {cols} FROM b.{table} "
                       f"EXCEPT ALL SELECT {cols} FROM a.{table}))"
                       ).fetchone()[0]
    ok &= diff == 0 and n > 0
    print(f"{table}: {n} rows (methods {methods}), rows differing between the local and the Dask run: {diff}")
print("IDENTICAL" if ok else "DIFFERENT")
sys.exit(0 if ok else 1)
EOF
