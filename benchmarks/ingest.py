"""Ingest benchmark: the pipeline's SQL vs the gzip floor vs a pandas row loop.

    python -m benchmarks.ingest --parts 1 2 4 --out docs/BENCHMARKS.md-section

On the same Google-format parts, in ONE run, for each part count N:

(a) floor:    ``gzip -dc`` of all N parts' files (job_events, task_events,
              task_usage) to /dev/null, one process: I/O + decompression.
(b) pipeline: build_warehouse: staging + selection (jobs, task_outcomes, tasks,
              selection_funnel) + features (job_checkpoints,
              checkpoint_features) in a fresh DuckDB file, in a subprocess
              (peak RSS and CPU time from os.wait4).
(c) row loop: the selection written the way the NURD authors' preprocessing
              did it (pandas.read_csv + ``for row in df.itertuples()``,
              accumulating dicts): max scheduling class >= 1 and >= 100 tasks,
              first SCHEDULE -> final FINISH latency, evictions / failures,
              per-task usage aggregates (duration-weighted means, maxima). It
              computes the tasks' FINAL features only (no per-checkpoint
              features, which (b) also builds). Run on ``--baseline-parts``
              parts (default 1) and, if ``--baseline-max-usage-rows`` is set,
              on the first rows of task_usage only; then extrapolated linearly
              by rows to N parts (the output says so).

Parts: the real trace's task_usage part is ~90 MB gzip / ~600 MB of CSV. The
benchmark writes parts of ``--part-mb`` MB of task_usage CSV by replicating
the embedded synthetic trace (``generate_google``, seed 2011, 48 jobs) with new
job ids (old id + r * 10^10, r = replica number), the exact column format
kept. Every part is self-contained (its jobs do not span parts). Only
``--selected-share`` of the replicas keep their production scheduling class;
the others get class 0 in job_events and task_events (so they are read and
rejected by the selection, as most of the real trace is: 1.1M of 25M tasks
are selected there). Parts are cached under ``--work-dir``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.ingest_parts import TABLES, ensure_parts, trace_dir
from benchmarks.ingest_row_loop import child_authors_idiom, child_baseline
from benchmarks.results import publish

# --------------------------------------------------------------------------- runners

def run_child(args: list[str]) -> dict:
    """Run this benchmark in a subprocess (as a module, from the same directory: the project root);
    wall time, peak RSS, CPU time (os.wait4)."""
    started = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "benchmarks.ingest", *args], stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - started
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"child {args[:2]} failed with exit code {p.returncode}")
    res = json.loads(out.decode().strip().splitlines()[-1])
    res |= {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "max_rss_mb": ru.ru_maxrss / 1024}
    return res


def run_floor(files: list[str]) -> dict:
    started = time.perf_counter()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(["gzip", "-dc", *files], stdout=null)
        _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("gzip -dc failed")
    return {"wall_s": time.perf_counter() - started, "cpu_s": ru.ru_utime + ru.ru_stime,
            "max_rss_mb": ru.ru_maxrss / 1024}


def child_pipeline(trace: str, db: str, tmp: str, memory_limit: str, threads: int) -> dict:
    import duckdb
    from stragglers.settings import SelectionSettings
    from stragglers.warehouse.assemble import build_warehouse
    from stragglers.warehouse.storage import configure
    for p in (db, db + ".wal"):
        if os.path.exists(p):
            os.remove(p)
    con = duckdb.connect(db)
    configure(con, memory_limit=memory_limit, threads=threads, temp_directory=tmp)
    s = SelectionSettings(trace="synthetic")
    seconds: dict[str, float] = {}
    built = build_warehouse(con, Path(trace), s, seconds=seconds)
    counts = built["selection"] | built["features"]
    t = {"selection_s": seconds["staging"] + seconds["selection"], "features_s": seconds["features"]}
    n, lat, ev, fl = con.execute("SELECT count(*), sum(latency_us), sum(evictions), sum(failures) "
                                 "FROM tasks").fetchone()
    con.close()
    return t | {"counts": counts, "check": {"tasks": int(n), "sum_latency_us": int(lat or 0),
                                          "evictions": int(ev or 0), "failures": int(fl or 0)}}


def child_scan(trace: str, memory_limit: str, threads: int) -> dict:
    """Reference: DuckDB reading every column of the same files once (no SQL logic)."""
    import duckdb
    from stragglers.settings import SelectionSettings
    from stragglers.warehouse.assemble import build_warehouse
    from stragglers.warehouse.storage import configure
    con = duckdb.connect()
    configure(con, memory_limit=memory_limit, threads=threads)
    build_warehouse(con, Path(trace), SelectionSettings(trace="synthetic"), until="staging")
    started = time.perf_counter()
    for view in ("stg_job_events", "stg_task_events", "stg_task_usage"):
        con.execute(f"SELECT count(*), sum(hash(COLUMNS(*))) FROM {view}").fetchall()
    return {"seconds": time.perf_counter() - started}


# --------------------------------------------------------------------------- report

def mb(x: float) -> str:
    return f"{x / 1e6:,.0f}"


def report(res: dict) -> str:
    m = res["manifest"]
    part0 = m["parts"][0]["files"]
    L = []
    L.append("### Figures (one run)\n")
    L.append(f"Run {res['started']} on {res['machine']}; load average before/after: "
             f"{res['load_before']} / {res['load_after']} (the machine is shared: wall times "
             f"include contention, CPU times do not).\n")
    L.append(f"Parts: {m['replicas']} replicas of the embedded trace per part "
             f"({m['selected_replicas']} with their production class kept); one part = "
             f"task_usage {mb(part0['task_usage']['bytes'])} MB CSV / {mb(part0['task_usage']['gz_bytes'])} MB gzip, "
             f"task_events {mb(part0['task_events']['bytes'])} MB CSV, "
             f"all tables {mb(sum(f['bytes'] for f in part0.values()))} MB CSV / "
             f"{mb(sum(f['gz_bytes'] for f in part0.values()))} MB gzip, "
             f"{sum(f['rows'] for f in part0.values()):,} rows.\n")
    L.append("| parts | CSV MB | gzip MB | rows | (a) gzip -dc s | (b) pipeline s (sel + feat) | "
             "(b) CPU s | (b) MB/s CSV | (b) MB/s gzip | (b) rows/s | (b)/(a) speed | (c) row loop s | "
             "(c)/(b) time | (b) peak RSS MB | (c) peak RSS MB | DuckDB bare scan s |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res["runs"]:
        a, b, c = r["floor"], r["pipeline"], r["baseline"]
        L.append(
            f"| {r['parts']} | {mb(r['bytes'])} | {mb(r['gz_bytes'])} | {r['rows']:,} | {a['wall_s']:.1f} | "
            f"{b['wall_s']:.1f} ({b['selection_s']:.1f} + {b['features_s']:.1f}) | {b['cpu_s']:.1f} | "
            f"{r['bytes'] / 1e6 / b['wall_s']:.0f} | {r['gz_bytes'] / 1e6 / b['wall_s']:.1f} | "
            f"{r['rows'] / b['wall_s']:,.0f} | {a['wall_s'] / b['wall_s']:.2f} | "
            f"{c['est_s']:.0f}{'*' if c['extrapolated'] else ''} | {c['est_s'] / b['wall_s']:.1f}x | "
            f"{b['max_rss_mb']:.0f} | {c['max_rss_mb']:.0f}{'*' if c['extrapolated'] else ''} | "
            f"{r['scan']['seconds']:.1f} |")
    L.append("")
    a1 = res["runs"][0]["floor"]
    r1 = res["runs"][0]
    L.append(f"(a) floor throughput ({r1['parts']} part): {r1['bytes'] / 1e6 / a1['wall_s']:.0f} MB/s CSV, "
             f"{r1['gz_bytes'] / 1e6 / a1['wall_s']:.1f} MB/s gzip, {r1['rows'] / a1['wall_s']:,.0f} rows/s "
             f"(one gzip process, one core).\n")
    L.append("DuckDB bare scan: the same three staging views read once, every column "
             "(`SELECT count(*), sum(hash(COLUMNS(*)))`), same threads: what DuckDB's gzip CSV "
             "reader alone costs, without the pipeline's SQL.\n")
    bl = res["baseline"]
    L.append(f"(c) measured once on {bl['parts']} part(s){', first ' + format(bl['rows']['task_usage'], ',') + ' task_usage rows' if bl['partial'] else ''}: "
             f"{bl['seconds']:.1f} s wall for {sum(bl['rows'].values()):,} rows "
             f"({sum(bl['rows'].values()) / bl['seconds']:,.0f} rows/s), peak RSS {bl['max_rss_mb']:.0f} MB. "
             f"`*` = extrapolated linearly by rows to the run's parts "
             f"(RSS: the measured value, it grows with the rows kept in dicts).\n")
    idm = res.get("idiom")
    if idm:
        L.append(f"(c') the authors' own task_usage filter idiom (pandas `iterrows()` + per-row "
                 f"`chunk.drop(index, inplace=True)`, chunks of 1,000 rows, `pd.concat`; "
                 f"data/filtertoproductiontaskusage.py of y-ding/nurd-mlsys22-code) on "
                 f"{idm['rows']:,} task_usage rows spread over part 0 (only the loop timed): {idm['seconds']:.1f} s = "
                 f"{idm['rows'] / idm['seconds']:,.0f} rows/s; extrapolated linearly by rows to the "
                 f"whole run (all tables, although it only filters): "
                 + ", ".join(f"{r['parts']} part(s) {r['idiom_est_s']:,.0f} s = "
                             f"{r['idiom_est_s'] / r['pipeline']['wall_s']:.0f}x (b)" for r in res["runs"])
                 + ".\n")
    chk = res.get("cross_check")
    if chk:
        L.append(f"Cross-check on the same part(s): pipeline `tasks` = {chk['pipeline']}; row loop = "
                 f"{chk['baseline']} -> {'identical' if chk['match'] else 'DIFFERENT'}.\n")
    t = res["targets"]
    L.append("Targets: (b) at least half the speed of (a): "
             + ", ".join(f"{k} part(s) {v:.2f}" for k, v in t["b_over_a"].items())
             + f" -> {'met' if t['b_over_a_met'] else 'NOT met'}; (b) at least 100x faster than (c): "
             + ", ".join(f"{k} part(s) {v:.1f}x" for k, v in t["c_over_b"].items())
             + f" -> {'met' if t['c_over_b_met'] else 'NOT met'}; memory flat as parts grow: "
             + ", ".join(f"{k}: {v:.0f} MB" for k, v in t["rss"].items())
             + f" -> {'met' if t['rss_flat'] else 'NOT met'} (flat = the largest run's peak RSS "
             f"< 1.5x the 1-part run's).\n")
    return "\n".join(L)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ingest",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--out", type=Path, help="write the markdown section here")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/nurd-bench-ingest"))
    ap.add_argument("--part-mb", type=float, default=600.0, help="task_usage CSV MB per part")
    ap.add_argument("--selected-share", type=float, default=0.1,
                    help="share of replicas keeping their production class (selected)")
    ap.add_argument("--baseline-parts", type=int, default=1, help="parts the row loop (c) reads")
    ap.add_argument("--baseline-max-usage-rows", type=int, default=None,
                    help="stop (c) after this many task_usage rows (then extrapolated)")
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--_pipeline", nargs=2, metavar=("TRACE", "DB"), help=argparse.SUPPRESS)
    ap.add_argument("--_baseline", metavar="TRACE", help=argparse.SUPPRESS)
    ap.add_argument("--_scan", metavar="TRACE", help=argparse.SUPPRESS)
    ap.add_argument("--_idiom", metavar="TRACE", help=argparse.SUPPRESS)
    ap.add_argument("--idiom-rows", type=int, default=50_000,
                    help="task_usage rows for (c'), the authors' iterrows/drop idiom (0: skip)")
    a = ap.parse_args(argv)

    if a._pipeline:
        res = child_pipeline(a._pipeline[0], a._pipeline[1], str(a.work_dir / "duckdb_tmp"),
                             a.memory_limit, a.threads)
        print(json.dumps(res))
        return 0
    if a._idiom:
        print(json.dumps(child_authors_idiom(a._idiom, a.idiom_rows)))
        return 0
    if a._scan:
        print(json.dumps(child_scan(a._scan, a.memory_limit, a.threads)))
        return 0
    if a._baseline:
        print(json.dumps(child_baseline(a._baseline, a.baseline_max_usage_rows)))
        return 0

    work = a.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    parts = sorted(set(a.parts))
    manifest = ensure_parts(work, max(parts + [a.baseline_parts]), a.part_mb, a.selected_share)
    res = {"started": time.strftime("%Y-%m-%d %H:%M:%S"),
           "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
                      f"Python {platform.python_version()}",
           "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg()),
           "manifest": manifest, "runs": []}

    # (c) once, on baseline_parts parts (or their first rows)
    bdir = trace_dir(work, manifest, a.baseline_parts)
    print(f"(c) row loop on {a.baseline_parts} part(s) ...", flush=True)
    bargs = ["--_baseline", str(bdir)]
    if a.baseline_max_usage_rows:
        bargs += ["--baseline-max-usage-rows", str(a.baseline_max_usage_rows)]
    bl = run_child(bargs)
    bl["parts"] = a.baseline_parts
    res["baseline"] = bl
    b_rows = sum(bl["rows"].values())
    print(f"    {bl['seconds']:.1f} s, {b_rows:,} rows", flush=True)

    if a.idiom_rows:
        print(f"(c') authors' iterrows/drop idiom on {a.idiom_rows:,} task_usage rows ...", flush=True)
        idm = run_child(["--_idiom", str(bdir), "--idiom-rows", str(a.idiom_rows)])
        res["idiom"] = idm
        print(f"    {idm['seconds']:.1f} s", flush=True)

    for n in parts:
        files = [p["files"][t] for p in manifest["parts"][:n] for t in TABLES]
        run = {"parts": n, "bytes": sum(f["bytes"] for f in files),
               "gz_bytes": sum(f["gz_bytes"] for f in files), "rows": sum(f["rows"] for f in files)}
        print(f"{n} part(s): (a) gzip -dc ...", flush=True)
        run["floor"] = run_floor([f["path"] for f in files])
        print(f"    {run['floor']['wall_s']:.1f} s; (b) pipeline ...", flush=True)
        d = trace_dir(work, manifest, n)
        run["pipeline"] = run_child(["--_pipeline", str(d), str(work / "bench.duckdb"),
                                     "--work-dir", str(work), "--memory-limit", a.memory_limit,
                                     "--threads", str(a.threads)])
        print(f"    {run['pipeline']['wall_s']:.1f} s, peak RSS {run['pipeline']['max_rss_mb']:.0f} MB; "
              f"DuckDB bare scan ...", flush=True)
        run["scan"] = run_child(["--_scan", str(d), "--memory-limit", a.memory_limit,
                                 "--threads", str(a.threads)])
        print(f"    {run['scan']['seconds']:.1f} s", flush=True)
        extrap = bl["partial"] or n != a.baseline_parts
        run["baseline"] = {"est_s": bl["seconds"] * run["rows"] / b_rows, "extrapolated": extrap,
                           "max_rss_mb": bl["max_rss_mb"]}
        if a.idiom_rows:
            run["idiom_est_s"] = res["idiom"]["seconds"] * run["rows"] / res["idiom"]["rows"]
        if n == a.baseline_parts and not bl["partial"]:
            p, c = run["pipeline"]["check"], bl["check"]
            res["cross_check"] = {"pipeline": p, "baseline": {k: c[k] for k in p},
                                  "match": all(p[k] == c[k] for k in p)}
        res["runs"].append(run)
    for p in (work / "bench.duckdb", work / "bench.duckdb.wal"):
        if p.exists():
            p.unlink()
    res["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    runs = res["runs"]
    res["targets"] = {
        "b_over_a": {r["parts"]: r["floor"]["wall_s"] / r["pipeline"]["wall_s"] for r in runs},
        "c_over_b": {r["parts"]: r["baseline"]["est_s"] / r["pipeline"]["wall_s"] for r in runs},
        "rss": {r["parts"]: r["pipeline"]["max_rss_mb"] for r in runs},
    }
    if a.idiom_rows:
        t = res["targets"]
        t["idiom_over_b"] = {r["parts"]: r["idiom_est_s"] / r["pipeline"]["wall_s"] for r in runs}
    t = res["targets"]
    t["b_over_a_met"] = all(v >= 0.5 for v in t["b_over_a"].values())
    t["c_over_b_met"] = all(v >= 100 for v in t["c_over_b"].values())
    t["rss_flat"] = runs[-1]["pipeline"]["max_rss_mb"] < 1.5 * runs[0]["pipeline"]["max_rss_mb"]
    publish(res, report(res), raw=work / "ingest_results.json", out=a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
