"""Digest of what a seeded run produces, to show a refactor changed no behaviour.

Runs the CLI chain on the embedded trace in a fresh data directory:
``*nurd_eval``, a few ``baseline_eval`` partitions (one run) and
``completion_times,operator_budgets,comparison_tables``; then writes one digest line per warehouse
table (rows sorted, volatile columns dropped) and per text report file.

    python pipeline/behaviour_snapshot.py OUT.json [--data-dir DIR] [--methods hbos,tobit]
    python pipeline/behaviour_snapshot.py --compare A.json B.json

(``python -m pipeline.behaviour_snapshot ...`` is the same; the tests import it as
``pipeline.behaviour_snapshot``.)

Two snapshots of the same settings must be identical (``--compare`` exits 1
and lists the differing entries otherwise).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

# Columns that record when or how fast, not what: excluded from the digest.
VOLATILE_COLUMNS = {"seconds", "finished_at", "started_at", "elapsed_s", "built_at",
                    "inputs"}   # table_settings.inputs: a digest of the raw files' names, sizes and mtimes
TEXT_SUFFIXES = {".md", ".csv", ".json", ".html"}
DEFAULT_METHODS = "hbos,pu_en,tobit"


def _run(args: list[str], env: dict) -> None:
    cmd = [sys.executable, "-m", "dagster", "asset", "materialize", "-m", "pipeline", *args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)


def run_chain(data_dir: Path, methods: list[str]) -> None:
    env = {**os.environ, "NURD_DATA_DIR": str(data_dir), "NURD_AUTOMATION": "off",
           "DAGSTER_HOME": str(data_dir / "dagster_home")}
    (data_dir / "dagster_home").mkdir(parents=True, exist_ok=True)
    _run(["--select", "*nurd_eval"], env)
    for method in methods:  # one partition per run: partition ranges need contiguous keys
        _run(["--select", "baseline_eval", "--partition", method], env)
    _run(["--select", "completion_times,operator_budgets,comparison_tables"], env)


def _table_digest(con: duckdb.DuckDBPyConnection, table: str) -> dict:
    cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall() if r[0] not in VOLATILE_COLUMNS]
    rows = con.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY ALL").fetchall()
    h = hashlib.sha256()
    per_col = [hashlib.sha256() for _ in cols]
    for row in rows:
        vals = tuple(round(v, 9) if isinstance(v, float) else v for v in row)
        h.update(repr(vals).encode())
        for c, v in zip(per_col, vals):
            c.update(repr(v).encode())
    # per column too: a table that gained columns can be shown unchanged in the others
    return {"rows": len(rows), "columns": cols, "sha256": h.hexdigest(),
            "column_sha256": {c: d.hexdigest() for c, d in zip(cols, per_col)}}


def snapshot(data_dir: Path) -> dict:
    out: dict[str, dict] = {}
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"), read_only=True)
    try:
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables "
                                    "WHERE table_type = 'BASE TABLE' ORDER BY 1").fetchall():
            out[f"table:{table}"] = _table_digest(con, table)
    finally:
        con.close()
    reports = data_dir / "reports"
    for path in sorted(reports.rglob("*")) if reports.exists() else []:
        if path.suffix in TEXT_SUFFIXES:
            out[f"report:{path.relative_to(reports)}"] = {
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return out


def compare(a: dict, b: dict) -> list[str]:
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def column_changes(a: dict, b: dict) -> list[str]:
    """For tables in both snapshots: columns only in B, only in A, and common columns that differ."""
    lines = []
    for k in sorted(set(a) & set(b)):
        ca, cb = a[k].get("column_sha256"), b[k].get("column_sha256")
        if ca is None or cb is None or ca == cb:
            continue
        added = [c for c in cb if c not in ca]
        removed = [c for c in ca if c not in cb]
        changed = [c for c in ca if c in cb and ca[c] != cb[c]]
        lines.append(f"{k}: rows {a[k]['rows']} -> {b[k]['rows']}; added {added}; removed {removed}; "
                     f"common columns that differ {changed}")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", nargs="?")
    p.add_argument("--data-dir")
    p.add_argument("--methods", default=DEFAULT_METHODS)
    p.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = p.parse_args()
    if args.compare:
        a, b = (json.loads(Path(x).read_text()) for x in args.compare)
        diff = compare(a, b)
        for k in diff:
            print(f"differs: {k}\n  A={a.get(k)}\n  B={b.get(k)}")
        print(f"{len(set(a) | set(b)) - len(diff)} entries identical, {len(diff)} differ")
        for line in column_changes(a, b):
            print("columns:", line)
        return 1 if diff else 0
    if not args.out:
        p.error("OUT is required unless --compare is given")
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="snapshot-"))
    run_chain(data_dir, [m for m in args.methods.split(",") if m])
    Path(args.out).write_text(json.dumps(snapshot(data_dir), indent=1, sort_keys=True))
    print(f"snapshot of {data_dir} written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
