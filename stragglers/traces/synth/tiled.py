"""A longer events-only Google trace made of consecutive copies of a real one (the month's size from
the real excerpt): copy ``c`` of task_events / job_events part ``p`` is written as part
``c * parts + p``, its times shifted by ``c`` spans and its job ids by ``c * JOB_ID_SHIFT``, on the
same machines (machine_events copied once). So machine load, history and recurring names keep
the real shape while the rows grow ``copies``-fold. Written as gzip CSV parts with the raw files'
columns, so the pipeline reads it as it reads a mirror (benchmarks/month.py, tests/test_bounded_memory.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from stragglers.trace_formats import RAW_COLUMNS

JOB_ID_SHIFT = 10_000_000_000     # above every real job id: the copies' jobs never collide
EDGE_TIMES = (0, 9223372036854775807)   # 'before the window' and 'after it' stay what they are


def _read(view: str, path: Path) -> str:
    columns = ", ".join(f"'{name}': '{kind}'" for name, kind in RAW_COLUMNS[view].items())
    return (f"read_csv('{path}', header = false, delim = ',', quote = '\"', escape = '\"', nullstr = '', "
            f"compression = 'gzip', auto_detect = false, columns = {{{columns}}})")


def tile(raw_dir: Path, out_dir: Path, copies: int, parts: int, span_us: int) -> dict[str, int]:
    """Write ``copies`` consecutive copies of task_events and job_events parts 0..``parts``-1 of
    ``raw_dir`` (which span ``span_us``) under ``out_dir``; returns {table: parts written}."""
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    con = duckdb.connect()
    total = copies * parts
    for table in ("task_events", "job_events"):
        view = f"stg_{table}"
        (out_dir / table).mkdir(parents=True, exist_ok=True)
        shifted = ", ".join(
            f"CASE WHEN time IN {EDGE_TIMES} THEN time ELSE time + $copy * {span_us} END" if name == "time"
            else f"job_id + $copy * {JOB_ID_SHIFT}" if name == "job_id" else f'"{name}"'
            for name in RAW_COLUMNS[view])
        for p in range(parts):
            source = raw_dir / table / f"part-{p:05d}-of-00500.csv.gz"
            if not source.exists():
                raise FileNotFoundError(f"tiling needs {source}")
            targets = [(c, out_dir / table / f"part-{c * parts + p:05d}-of-{total:05d}.csv.gz") for c in range(copies)]
            targets = [(c, target) for c, target in targets if not target.exists()]
            if not targets:
                continue
            # the part parsed once (in memory), each copy written from it
            con.execute(f"CREATE OR REPLACE TEMP TABLE part AS SELECT * FROM {_read(view, source)}")
            for c, target in targets:
                tmp = target.with_name(target.name + ".tmp")
                con.execute(f"COPY (SELECT {shifted.replace('$copy', str(c))} FROM part) "
                            f"TO '{tmp}' (FORMAT csv, HEADER false, COMPRESSION gzip)")
                tmp.replace(target)
    machines = out_dir / "machine_events" / "part-00000-of-00001.csv.gz"
    machines.parent.mkdir(parents=True, exist_ok=True)
    if not machines.exists():
        shutil.copyfile(raw_dir / "machine_events" / "part-00000-of-00001.csv.gz", machines)
    return {"task_events": total, "job_events": total, "machine_events": 1}

