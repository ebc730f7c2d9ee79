"""Ingest benchmark: the pipeline's SQL vs the gzip floor vs a pandas row loop.

    python benchmarks/ingest.py --parts 1 2 4 --out docs/BENCHMARKS.md-section

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
import gzip
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from results import publish

TABLES = ("job_events", "task_events", "task_usage")
JOB_ID_STEP = 10 ** 10
CACHE_VERSION = "1"
# column index of the scheduling class in each table (None: no such column)
CLASS_FIELD = {"job_events": 5, "task_events": 7, "task_usage": None}

USAGE_COLS = ["start_time", "end_time", "job_id", "task_index", "machine_id", "cpu_rate",
              "canonical_memory", "assigned_memory", "unmapped_page_cache", "total_page_cache",
              "maximum_memory", "disk_io_time", "local_disk_space", "maximum_cpu_rate",
              "maximum_disk_io_time", "cpi", "mai", "sample_portion", "aggregation_type",
              "sampled_cpu_usage"]
TASK_EVENT_COLS = ["time", "missing_info", "job_id", "task_index", "machine_id", "event_type",
                   "user_name", "scheduling_class", "priority", "cpu_request", "memory_request",
                   "disk_request", "different_machine"]
JOB_EVENT_COLS = ["time", "missing_info", "job_id", "event_type", "user_name", "scheduling_class",
                  "job_name", "logical_job_name"]
SENTINEL_US = 2 ** 63 - 1


# --------------------------------------------------------------------------- parts

def _source_lines(work: Path) -> dict[str, list[str]]:
    """The embedded trace (one part per table), generated once under work/source."""
    src = work / "source"
    stamp = src / ".bench.json"
    from stragglers.traces.synth import GENERATOR_VERSION, generate_google
    want = {"generator_version": GENERATOR_VERSION, "seed": 2011, "n_jobs": 48, "n_parts": 1}
    if not (stamp.exists() and json.loads(stamp.read_text()) == want):
        generate_google(src, seed=2011, n_jobs=48, n_parts=1)
        stamp.write_text(json.dumps(want))
    out = {}
    for t in TABLES:
        with gzip.open(src / t / "part-00000-of-00001.csv.gz", "rt") as fh:
            out[t] = fh.read().splitlines()
    return out


def _split(lines: list[str], table: str):
    """(head up to the job id, job id, tail, tail with scheduling class 0) per line."""
    heads, ids, tails, tails0 = [], [], [], []
    cf = CLASS_FIELD[table]
    for line in lines:
        f = line.split(",")
        heads.append(f[0] + "," + f[1] + ",")
        ids.append(int(f[2]))
        rest = f[3:]
        tails.append("," + ",".join(rest) + "\n")
        if cf is not None:
            rest = list(rest)
            rest[cf - 3] = "0"
            tails0.append("," + ",".join(rest) + "\n")
    return heads, ids, tails, (tails0 or tails)


def _write_part(args) -> dict:
    pdir, i, n_parts, replicas, n_sel, split = args
    info = {"index": i, "files": {}, "replicas": replicas, "selected_replicas": n_sel}
    for t in TABLES:
        path = pdir / t / f"part-{i:05d}-of-{n_parts:05d}.csv.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        heads, ids, tails, tails0 = split[t]
        raw = rows = 0
        with open(path, "wb") as out:
            gz = subprocess.Popen(["gzip", "-6", "-n", "-c"], stdin=subprocess.PIPE, stdout=out)
            for j in range(replicas):
                off = (i * replicas + j + 1) * JOB_ID_STEP
                tl = tails if j < n_sel else tails0
                data = "".join([h + str(x + off) + tt for h, x, tt in zip(heads, ids, tl)]).encode()
                gz.stdin.write(data)
                raw += len(data)
                rows += len(heads)
            gz.stdin.close()
            if gz.wait() != 0:
                raise RuntimeError(f"gzip failed writing {path}")
        info["files"][t] = {"path": str(path), "bytes": raw, "gz_bytes": path.stat().st_size, "rows": rows}
    return info


def ensure_parts(work: Path, n_parts: int, part_mb: float, selected_share: float, log=print) -> dict:
    """Write (or reuse) n_parts parts per table under work/parts; returns the manifest."""
    pdir = work / "parts"
    manifest_path = pdir / "manifest.json"
    key = {"version": CACHE_VERSION, "part_mb": part_mb, "selected_share": selected_share}
    if manifest_path.exists():
        m = json.loads(manifest_path.read_text())
        if m["key"] == key and m["n_parts"] >= n_parts:
            return m
    log(f"writing {n_parts} benchmark parts of ~{part_mb:g} MB task_usage CSV under {pdir} ...")
    started = time.perf_counter()
    src = _source_lines(work)
    usage_bytes = sum(len(x) + 1 for x in src["task_usage"])
    replicas = max(1, math.ceil(part_mb * 1e6 / usage_bytes))
    n_sel = max(1, round(replicas * selected_share))
    split = {t: _split(src[t], t) for t in TABLES}
    if pdir.exists():
        shutil.rmtree(pdir)
    pdir.mkdir(parents=True)
    jobs = [(pdir, i, n_parts, replicas, n_sel, split) for i in range(n_parts)]
    with ProcessPoolExecutor(max_workers=min(2, n_parts)) as pool:
        parts = []
        for info in pool.map(_write_part, jobs):
            parts.append(info)
            log(f"  part {info['index']}: task_usage {info['files']['task_usage']['bytes'] / 1e6:.0f} MB CSV, "
                f"{info['files']['task_usage']['gz_bytes'] / 1e6:.0f} MB gzip "
                f"({time.perf_counter() - started:.0f} s)")
    m = {"key": key, "n_parts": n_parts, "replicas": replicas, "selected_replicas": n_sel,
         "source_usage_bytes": usage_bytes, "parts": parts,
         "seconds_to_write": round(time.perf_counter() - started, 1)}
    manifest_path.write_text(json.dumps(m, indent=1))
    return m


def trace_dir(work: Path, manifest: dict, n: int) -> Path:
    """A trace directory holding symlinks to the first n parts."""
    d = work / f"trace_{n}"
    if d.exists():
        shutil.rmtree(d)
    for t in TABLES:
        (d / t).mkdir(parents=True)
        for p in manifest["parts"][:n]:
            src = Path(p["files"][t]["path"])
            (d / t / src.name).symlink_to(src)
    return d


# --------------------------------------------------------------------------- runners

def run_child(args: list[str]) -> dict:
    """Run this script in a subprocess; wall time, peak RSS, CPU time (os.wait4)."""
    started = time.perf_counter()
    p = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE)
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


def child_baseline(trace: str, max_usage_rows: int | None) -> dict:
    """The selection as a pandas row loop (the authors' style), over every part of ``trace``."""
    import numpy as np
    import pandas as pd
    started = time.perf_counter()
    rows = {t: 0 for t in TABLES}
    files = {t: sorted((Path(trace) / t).glob("part-*-of-*.csv.gz")) for t in TABLES}

    # 1. job_events: largest scheduling class per job
    max_class: dict[int, int] = {}
    for f in files["job_events"]:
        df = pd.read_csv(f, header=None, names=JOB_EVENT_COLS)
        for row in df.itertuples(index=False):
            rows["job_events"] += 1
            c = row.scheduling_class
            if row.job_id not in max_class or c > max_class[row.job_id]:
                max_class[row.job_id] = c

    # 2. task_events: per task first SCHEDULE, final FINISH, last terminal event, EV/FL times
    first_sched: dict = {}
    final_finish: dict = {}
    last_term: dict = {}
    ev_times: dict = defaultdict(list)
    fl_times: dict = defaultdict(list)
    job_tasks: dict = defaultdict(set)
    for f in files["task_events"]:
        df = pd.read_csv(f, header=None, names=TASK_EVENT_COLS)
        for row in df.itertuples(index=False):
            rows["task_events"] += 1
            key = (row.job_id, row.task_index)
            job_tasks[row.job_id].add(row.task_index)
            et, tm = row.event_type, row.time
            if et == 1:
                if key not in first_sched or tm < first_sched[key]:
                    first_sched[key] = tm
            elif et == 4:
                if key not in final_finish or tm > final_finish[key]:
                    final_finish[key] = tm
            if 2 <= et <= 6:
                if key not in last_term or (tm, et) > last_term[key]:
                    last_term[key] = (tm, et)
            if et == 2:
                ev_times[key].append(tm)
            elif et == 3:
                fl_times[key].append(tm)

    selected_jobs = {j for j, ts in job_tasks.items() if max_class.get(j, -1) >= 1 and len(ts) >= 100}
    finished = {}
    for key, (tm, et) in last_term.items():
        if key[0] not in selected_jobs or et != 4:
            continue
        s = first_sched.get(key)
        ff = final_finish[key]
        if s is None or s == 0 or ff == SENTINEL_US:
            continue
        finished[key] = (s, ff)

    # 3. task_usage: per task duration-weighted means and maxima of the windows that
    #    ended by the final FINISH
    mean_cols = ["cpu_rate", "sampled_cpu_usage", "canonical_memory", "assigned_memory",
                 "unmapped_page_cache", "total_page_cache", "disk_io_time", "local_disk_space",
                 "cpi", "mai"]
    max_cols = ["maximum_cpu_rate", "maximum_memory", "maximum_disk_io_time"]
    acc: dict = {}
    limit = max_usage_rows if max_usage_rows else float("inf")
    done = False
    for f in files["task_usage"]:
        for df in pd.read_csv(f, header=None, names=USAGE_COLS, chunksize=500_000):
            for row in df.itertuples(index=False):
                if rows["task_usage"] >= limit:
                    done = True
                    break
                rows["task_usage"] += 1
                key = (row.job_id, row.task_index)
                fin = finished.get(key)
                if fin is None or row.end_time > fin[1]:
                    continue
                a = acc.get(key)
                if a is None:
                    a = acc[key] = {"w": [0.0] * len(mean_cols), "d": [0.0] * len(mean_cols),
                                    "m": [-np.inf] * len(max_cols)}
                dur = (row.end_time - row.start_time) / 1e6
                for i, c in enumerate(mean_cols):
                    v = getattr(row, c)
                    if v == v:   # not NaN (empty field)
                        a["w"][i] += v * dur
                        a["d"][i] += dur
                for i, c in enumerate(max_cols):
                    v = getattr(row, c)
                    if v == v and v > a["m"][i]:
                        a["m"][i] = v
            if done:
                break
        if done:
            break

    tasks = []
    for key, a in acc.items():
        s, ff = finished[key]
        feats = [w / d if d > 0 else None for w, d in zip(a["w"], a["d"])]
        tasks.append((key, (ff - s), sum(t < ff for t in ev_times.get(key, ())),
                      sum(t < ff for t in fl_times.get(key, ())), feats, a["m"]))
    return {"seconds": time.perf_counter() - started, "rows": rows, "partial": done,
            "check": {"jobs": len(selected_jobs), "tasks": len(tasks),
                      "sum_latency_us": int(sum(t[1] for t in tasks)),
                      "evictions": int(sum(t[2] for t in tasks)), "failures": int(sum(t[3] for t in tasks))}}


def child_authors_idiom(trace: str, n_rows: int) -> dict:
    """(c') the authors' exact task_usage filter idiom (data/filtertoproductiontaskusage.py):
    read_csv(chunksize=1000), ``for index, row in chunk.iterrows()``, ``chunk.drop(index,
    inplace=True)`` for rows of non-selected jobs, ``pd.concat`` of the kept chunks. On the
    first ``n_rows`` task_usage rows of the first part; the selected jobs are taken as given
    (from job_events + task_events, not timed). The ~n_rows rows are every k-th 1,000-row
    chunk of the part (so selected and rejected replicas are in proportion); only the loop over
    those chunks is timed (parsing is not: this favours (c'))."""
    import pandas as pd
    f = sorted((Path(trace) / "task_usage").glob("part-*-of-*.csv.gz"))[0]
    je = pd.read_csv(sorted((Path(trace) / "job_events").glob("part-*"))[0], header=None, names=JOB_EVENT_COLS)
    te = pd.read_csv(sorted((Path(trace) / "task_events").glob("part-*"))[0], header=None, names=TASK_EVENT_COLS)
    schedulingclass = je.groupby("job_id").scheduling_class.max().to_dict()
    parallelism = te.groupby("job_id").task_index.nunique().to_dict()
    total = sum(1 for _ in gzip.open(f, "rb"))
    every = max(1, total // max(1, n_rows))
    df = pd.DataFrame()
    done = 0
    seconds = 0.0
    for ci, chunk in enumerate(pd.read_csv(f, header=None, names=USAGE_COLS, chunksize=1000)):
        if ci % every or done >= n_rows:
            continue     # chunks spread over the whole part; parsing them is not timed
        started = time.perf_counter()
        for index, row in chunk.iterrows():
            x = row["job_id"]
            if x in schedulingclass and x in parallelism:
                if schedulingclass[x] == 0 or parallelism[x] < 100:
                    chunk.drop(index, inplace=True)
            else:
                chunk.drop(index, inplace=True)
        df = pd.concat([df, chunk])
        seconds += time.perf_counter() - started
        done += 1000
    return {"seconds": seconds, "rows": done, "kept": len(df)}


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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
