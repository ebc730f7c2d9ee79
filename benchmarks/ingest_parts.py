"""The parts benchmarks/ingest.py reads: Google-format parts of about ``--part-mb`` MB of task_usage
CSV each, written by replicating the embedded synthetic trace with new job ids (its docstring says
how), cached under the work directory with a manifest."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

TABLES = ("job_events", "task_events", "task_usage")
JOB_ID_STEP = 10 ** 10
CACHE_VERSION = "1"
# column index of the scheduling class in each table (None: no such column)
CLASS_FIELD = {"job_events": 5, "task_events": 7, "task_usage": None}


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
