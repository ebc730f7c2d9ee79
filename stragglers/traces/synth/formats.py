"""Trace layouts (column lists, schema.csv, SHA256SUM) and deterministic writers.

The column lists are the single source of truth for the generator and for
readers: the parser test reads the real rows quoted in docs/TRACES.md with them.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import os
import re
import shutil
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable

# Google clusterdata-2011-2 schema.csv rows: (content, format, mandatory),
# field numbers are positions + 1. Text as in the bucket's schema.csv.
GOOGLE_SCHEMA: dict[str, list[tuple[str, str, str]]] = {
    "job_events": [
        ("time", "INTEGER", "YES"),
        ("missing info", "INTEGER", "NO"),
        ("job ID", "INTEGER", "YES"),
        ("event type", "INTEGER", "YES"),
        ("user", "STRING_HASH", "NO"),
        ("scheduling class", "INTEGER", "NO"),
        ("job name", "STRING_HASH", "NO"),
        ("logical job name", "STRING_HASH", "NO"),
    ],
    "machine_events": [
        ("time", "INTEGER", "YES"),
        ("machine ID", "INTEGER", "YES"),
        ("event type", "INTEGER", "YES"),
        ("platform ID", "STRING_HASH", "NO"),
        ("CPUs", "FLOAT", "NO"),
        ("Memory", "FLOAT", "NO"),
    ],
    "task_events": [
        ("time", "INTEGER", "YES"),
        ("missing info", "INTEGER", "NO"),
        ("job ID", "INTEGER", "YES"),
        ("task index", "INTEGER", "YES"),
        ("machine ID", "INTEGER", "NO"),
        ("event type", "INTEGER", "YES"),
        ("user", "STRING_HASH", "NO"),
        ("scheduling class", "INTEGER", "NO"),
        ("priority", "INTEGER", "YES"),
        ("CPU request", "FLOAT", "NO"),
        ("memory request", "FLOAT", "NO"),
        ("disk space request", "FLOAT", "NO"),
        ("different machines restriction", "BOOLEAN", "NO"),
    ],
    "task_usage": [
        ("start time", "INTEGER", "YES"),
        ("end time", "INTEGER", "YES"),
        ("job ID", "INTEGER", "YES"),
        ("task index", "INTEGER", "YES"),
        ("machine ID", "INTEGER", "YES"),
        ("CPU rate", "FLOAT", "NO"),
        ("canonical memory usage", "FLOAT", "NO"),
        ("assigned memory usage", "FLOAT", "NO"),
        ("unmapped page cache", "FLOAT", "NO"),
        ("total page cache", "FLOAT", "NO"),
        ("maximum memory usage", "FLOAT", "NO"),
        ("disk I/O time", "FLOAT", "NO"),
        ("local disk space usage", "FLOAT", "NO"),
        ("maximum CPU rate", "FLOAT", "NO"),
        ("maximum disk IO time", "FLOAT", "NO"),
        ("cycles per instruction", "FLOAT", "NO"),
        ("memory accesses per instruction", "FLOAT", "NO"),
        ("sample portion", "FLOAT", "NO"),
        ("aggregation type", "BOOLEAN", "NO"),
        ("sampled CPU usage", "FLOAT", "NO"),
    ],
}
GOOGLE_TABLES = ("job_events", "task_events", "task_usage")
SCHEMA_HEADER = "file pattern,field number,content,format,mandatory"

# Event types (docs/TRACES.md).
SUBMIT, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST, UPDATE_PENDING, UPDATE_RUNNING = range(9)
EVENT_NAMES = ("SUBMIT", "SCHEDULE", "EVICT", "FAIL", "FINISH", "KILL", "LOST",
               "UPDATE_PENDING", "UPDATE_RUNNING")

S = 1_000_000  # microseconds per second
TRACE_START_US = 600_000_000
SENTINEL_US = 2**63 - 1
USAGE_WINDOW_US = 300_000_000

ALIBABA_BATCH_INSTANCE_COLUMNS = (
    "instance_name", "task_name", "job_name", "task_type", "status",
    "start_time", "end_time", "machine_id", "seq_no", "total_seq_no",
    "cpu_avg", "cpu_max", "mem_avg", "mem_max",
)
ALIBABA_STATUSES = ("Terminated", "Failed", "Running", "Waiting", "Interrupted",
                    "Ready", "Cancelled")
_ALIBABA_INT = {"task_type", "start_time", "end_time", "seq_no", "total_seq_no"}
_ALIBABA_FLOAT = {"cpu_avg", "cpu_max", "mem_avg", "mem_max"}


def snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def google_columns(table: str) -> list[str]:
    """snake_case column names of a Google table, e.g. 'cpu_rate'."""
    return [snake(c) for c, _, _ in GOOGLE_SCHEMA[table]]


def part_pattern(table: str) -> str:
    if table == "machine_events":
        return "machine_events/part-00000-of-00001.csv.gz"
    return f"{table}/part-?????-of-?????.csv.gz"


def part_name(table: str, i: int, n: int) -> str:
    return f"{table}/part-{i:05d}-of-{n:05d}.csv.gz"


def schema_csv_text(tables: Iterable[str]) -> str:
    lines = [SCHEMA_HEADER]
    for t in tables:
        for k, (content, fmt, mand) in enumerate(GOOGLE_SCHEMA[t], start=1):
            lines.append(f"{part_pattern(t)},{k},{content},{fmt},{mand}")
    return "\n".join(lines) + "\n"


def _convert(value: str, fmt: str):
    if value == "":
        return None
    if fmt == "INTEGER" or fmt == "BOOLEAN":
        return int(value)
    if fmt == "FLOAT":
        return float(value)
    return value


def parse_google_fields(table: str, fields: list[str]) -> dict:
    """Typed dict of one Google row (list of strings). Missing -> None.
    Raises ValueError on a wrong field count or a missing mandatory field."""
    schema = GOOGLE_SCHEMA[table]
    if len(fields) != len(schema):
        raise ValueError(f"{table}: {len(fields)} fields, expected {len(schema)}")
    out = {}
    for (content, fmt, mand), v in zip(schema, fields):
        x = _convert(v, fmt)
        if x is None and mand == "YES":
            raise ValueError(f"{table}: mandatory field {content!r} is empty")
        out[snake(content)] = x
    return out


def parse_google_line(table: str, line: str) -> dict:
    return parse_google_fields(table, next(csv.reader([line.rstrip("\r\n")])))


def read_google_part(path: Path, table: str) -> list[dict]:
    with gzip.open(path, "rt", newline="") as fh:
        return [parse_google_fields(table, row) for row in csv.reader(fh)]


def parse_alibaba_fields(fields: list[str]) -> dict:
    if len(fields) != len(ALIBABA_BATCH_INSTANCE_COLUMNS):
        raise ValueError(f"batch_instance: {len(fields)} fields, expected 14")
    out = {}
    for name, v in zip(ALIBABA_BATCH_INSTANCE_COLUMNS, fields):
        if v == "":
            out[name] = None
        elif name in _ALIBABA_INT:
            out[name] = int(float(v))
        elif name in _ALIBABA_FLOAT:
            out[name] = float(v)
        else:
            out[name] = v
    return out


# ---------------------------------------------------------------------------
# Deterministic, atomic writers.
# ---------------------------------------------------------------------------
def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def gzip_bytes(data: bytes, level: int = 6) -> bytes:
    """gzip with mtime 0 and no file name in the header (reproducible)."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=level, mtime=0) as gz:
        gz.write(data)
    return buf.getvalue()


def write_gzip_lines(path: Path, lines: list[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    _atomic_write_bytes(path, gzip_bytes(text.encode("utf-8")))


def write_text(path: Path, text: str) -> None:
    _atomic_write_bytes(path, text.encode("utf-8"))


def write_tar_gz(path: Path, member: str, data: bytes) -> None:
    """tar.gz of one member with fixed metadata (mtime 0, root, 0644)."""
    tbuf = io.BytesIO()
    with tarfile.open(fileobj=tbuf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo(member)
        info.size = len(data)
        info.mtime = 0
        info.mode = 0o644
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        tar.addfile(info, io.BytesIO(data))
    _atomic_write_bytes(path, gzip_bytes(tbuf.getvalue()))


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_sha256sum(root: Path) -> list[str]:
    """SHA256SUM for every file under root (itself excluded), sorted by path,
    lines '<hex>  ./<relative path>' like the Google bucket."""
    rels = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.name != "SHA256SUM" and not p.name.startswith(".")
    )
    lines = [f"{sha256_file(root / r)}  ./{r}" for r in rels]
    write_text(root / "SHA256SUM", "".join(line + "\n" for line in lines))
    return lines


def read_sha256sum(root: Path) -> dict[str, str]:
    out = {}
    for line in (root / "SHA256SUM").read_text().splitlines():
        hexd, rel = line.split("  ", 1)
        out[rel[2:] if rel.startswith("./") else rel] = hexd
    return out


#: Written by the project's generators beside a trace they write: its parts with no rows (time slices
#: without events) are on purpose, so staging accepts them (NURD_EMPTY_PARTS=fail applies to mirrors).
#: Hidden, so that SHA256SUM does not list it.
EMPTY_PARTS_MARKER = ".empty-parts-on-purpose"


def mark_empty_parts_on_purpose(root: Path) -> None:
    write_text(root / EMPTY_PARTS_MARKER, "written by a generator of stragglers: parts with no rows are on purpose\n")


@contextmanager
def published_dir(out_dir: Path):
    """Yield a hidden sibling directory to write a trace into; on success write its
    SHA256SUM and swap it in place of ``out_dir`` (no half-written trace is ever
    visible under ``out_dir``); on failure remove it."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp", dir=out_dir.parent))
    try:
        yield stage
        write_sha256sum(stage)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        stage.rename(out_dir)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def file_sizes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}
