"""Spark event log read: the staging of one real log against the decompression floor, in ONE run.

    python -m benchmarks.spark_read [--log FILE] [--repeats 5] [--write docs/BENCHMARKS.md]

On the same log (default: nds_q72_dataproc_2_2.zstd of the real logs, 13,504 tasks), alternating,
``--repeats`` times each:

(a) floor:   ``zstd -dc LOG | wc -l`` (the decompressed lines counted, nothing parsed);
(b) decode:  the reader's decompression and line split alone (stragglers.traces.spark_eventlog);
(c) events:  the reader's batches into the event tables in a fresh DuckDB file (every line checked
             to be JSON, the events the tables read parsed into typed rows), no typed table, no commit;
(d) staging: stage_spark into a fresh DuckDB file: (c), then the typed tables stg_spark_* built
             and committed; and the same with one DuckDB thread (a 16 MB batch is little to share);
(e) parse:   what parsing alone costs, the reason for the ratio: the loader's task-end statement
             alone (its lines, 86% of the bytes of the default log, picked out of the lines already
             decoded and split, and parsed by sql/spark_task_ends.sql into one table);
(f) native:  DuckDB's own multi-threaded NDJSON reader (read_json) on the compressed log, every line
             into the task-end fields of sql/spark_task_ends.sql (no line kept apart, no bad line
             found): the fastest typed read this stack has, as a bound.

Wall clock and CPU time (user + system: of the child processes for (a), of this process and its
DuckDB threads for the others) are reported by their medians; the ratio (d) / (a) is the one the
target is about (within 3x). CPU time is the steadier of the two on a shared machine. With
``--write``, the result replaces the section "Spark event logs: the read" of that file.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.results import WRITE_HELP, publish_section
from stragglers.traces.spark_eventlog import codec_of, read_lines
from stragglers.warehouse.spark_staging import ALL_LINES, _Loader, stage_spark
from stragglers.warehouse.sql_files import render

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Spark event logs: the read"
DEFAULT_LOG = REPO.parent / "shared" / "realdata" / "spark_eventlogs" / "nds_q72_dataproc_2_2.zstd"


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def measure(fn, who: int = resource.RUSAGE_SELF) -> tuple[float, float]:
    """(wall s, CPU s) of one call."""
    cpu, wall = _cpu(who), time.perf_counter()
    fn()
    return time.perf_counter() - wall, _cpu(who) - cpu


def floor(log: Path) -> None:
    out = subprocess.run(f"zstd -dc '{log}' | wc -l", shell=True, check=True, capture_output=True, text=True)
    assert int(out.stdout.split()[0]) > 0


def decode(log: Path) -> None:
    assert sum(len(batch) for batch in read_lines(log, codec_of(log.name))) > 0


def events(log: Path) -> None:
    import duckdb

    con = duckdb.connect()
    loader = _Loader(con)
    for batch in read_lines(log, codec_of(log.name)):
        loader.load(0, batch)
    con.close()


def decoded_lines(log: Path):
    """The log's lines as the loader registers them, decoded and split outside the timing."""
    import pyarrow as pa

    return pa.concat_tables([_Loader._table(0, b.file, b.first, b.text, b.unterminated)
                             for b in read_lines(log, codec_of(log.name))])


def parse_only(con, loader: _Loader, lines) -> None:
    """The loader's own task-end statement (its events' lines picked out, then parsed), alone."""
    con.register(ALL_LINES, lines)
    con.execute(f"CREATE OR REPLACE TEMP TABLE parsed AS {loader.sql['spark_task_ends'][False]}")
    con.unregister(ALL_LINES)


def native_columns() -> str:
    """read_json's columns: the JSON structure sql/spark_task_ends.sql transforms into."""
    spec = json.loads(re.search(r"json_transform\(text, '(.*?)'\)", render("spark_task_ends"), re.S).group(1))

    def sql_type(v) -> str:
        return v if isinstance(v, str) else "STRUCT(" + ", ".join(f'"{k}" {sql_type(t)}' for k, t in v.items()) + ")"
    return "{" + ", ".join(f"'{k}': '{sql_type(v)}'" for k, v in spec.items()) + "}"


def native(con, log: Path, columns: str) -> None:
    con.execute(f"""CREATE OR REPLACE TEMP TABLE native AS SELECT * FROM read_json('{log}',
                    format = 'newline_delimited', compression = '{codec_of(log.name)}', columns = {columns},
                    maximum_object_size = 1000000000)""")


def staging(log_dir: Path, db: Path, threads: int | None = None) -> dict:
    import duckdb

    db.unlink(missing_ok=True)
    con = duckdb.connect(str(db))
    if threads:
        con.execute(f"SET threads = {threads}")
    try:
        return stage_spark(con, log_dir)
    finally:
        con.close()


def run(log: Path, repeats: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="spark_read_") as tmp:
        log_dir = Path(tmp) / "logs"
        log_dir.mkdir()
        (log_dir / log.name).symlink_to(log.resolve())   # the log read where it is
        db = Path(tmp) / "warehouse.duckdb"
        counts = staging(log_dir, db)   # warm-up: imports, DuckDB's extension, the page cache
        import duckdb

        con, lines, columns = duckdb.connect(), decoded_lines(log), native_columns()
        loader = _Loader(con)
        parse_only(con, loader, lines)
        native(con, log, columns)
        times = {"floor": [], "decode": [], "events": [], "staging": [], "staging_1": [], "parse": [], "native": []}
        loads = []
        for _ in range(repeats):
            times["parse"].append(measure(lambda: parse_only(con, loader, lines)))
            times["native"].append(measure(lambda: native(con, log, columns)))
            times["floor"].append(measure(lambda: floor(log), resource.RUSAGE_CHILDREN))
            times["decode"].append(measure(lambda: decode(log)))
            times["events"].append(measure(lambda: events(log)))
            times["staging"].append(measure(lambda: staging(log_dir, db)))
            times["staging_1"].append(measure(lambda: staging(log_dir, db, threads=1)))
            loads.append(os.getloadavg()[0])
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    return {"log": log.name, "bytes": log.stat().st_size, "repeats": repeats, "counts": counts, "median": med,
            "wall_ratio": med["staging"][0] / med["floor"][0], "cpu_ratio": med["staging"][1] / med["floor"][1],
            "parse_ratio": med["parse"][1] / med["floor"][1], "native_ratio": med["native"][0] / med["floor"][0],
            "load_mean": statistics.mean(loads), "cores": os.cpu_count(),
            "when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "python": platform.python_version()}


def report(res: dict) -> str:
    m = res["median"]
    c = res["counts"]
    rows = [("(a) `zstd -dc LOG \\| wc -l`", *m["floor"]), ("(b) decode and split (the reader alone)", *m["decode"]),
            ("(c) the events into their tables (in memory)", *m["events"]),
            ("(d) stage_spark: log to stg_spark_* tables, committed", *m["staging"]),
            ("(d) with one DuckDB thread", *m["staging_1"]),
            ("(e) the loader's task-end statement alone, on lines already decoded (sql/spark_task_ends.sql)",
             *m["parse"]),
            ("(f) DuckDB's read_json on the compressed log into the task-end fields (a bound)", *m["native"])]
    return "\n".join([
        SECTION,
        "",
        f"Written by `python -m benchmarks.spark_read` ({res['when']}, {res['cores']} cores, load average "
        f"{res['load_mean']:.1f} during the run, Python {res['python']}): `{res['log']}` "
        f"({res['bytes'] / 1e6:.1f} MB compressed; {c['task_attempts']:,} task attempts, "
        f"{c['stage_attempts']} stage attempts of which {c['selected_stage_attempts']} of at least 100 tasks), "
        f"medians of {res['repeats']} alternating runs of each.",
        "",
        "| step | wall (s) | CPU (s) |",
        "|---|---|---|",
        *[f"| {name} | {wall:.3f} | {cpu:.3f} |" for name, wall, cpu in rows],
        "",
        f"**Staging / floor: {res['wall_ratio']:.1f}x by the wall clock, {res['cpu_ratio']:.1f}x by CPU time** "
        f"(the target: within 3x). "
        + ("Met." if max(res["wall_ratio"], res["cpu_ratio"]) <= 3 else
           f"Not met. The floor only counts newlines; the staging checks every line to be JSON (as Spark's "
           f"replay parses each) and parses the task events' fields into typed rows. That parse alone, on "
           f"the task-end lines already decoded (e), costs {res['parse_ratio']:.1f}x the floor's CPU time, "
           f"and DuckDB's own multi-threaded reader (f), which keeps no line apart and finds no bad one, "
           f"takes {res['native_ratio']:.1f}x the floor's wall time"
           + (": a typed read of this log within 3x of a newline count is not in reach of this stack."
              if res["native_ratio"] > 3 else
              ": the rest of the gap is ours (every line checked, the events split into their tables, bad "
              "lines kept apart with their file and line).")),
    ])


def parse_log_arguments(prog: str, description: str, *, log_help: str, repeats: int) -> argparse.Namespace:
    """The command line of a benchmark of one event log (--log, --repeats, --write); stops where the log
    is missing."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--log", type=Path, default=DEFAULT_LOG, help=f"{log_help} (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=repeats)
    p.add_argument("--write", type=Path, default=None, help=WRITE_HELP)
    a = p.parse_args()
    if not a.log.is_file():
        sys.exit(f"no event log at {a.log} (--log; the real logs are in shared/realdata/spark_eventlogs)")
    return a


def main() -> None:
    a = parse_log_arguments("python -m benchmarks.spark_read", __doc__.splitlines()[0], log_help="a zstd event log",
                            repeats=5)
    publish_section(report(run(a.log, a.repeats)), a.write, SECTION)


if __name__ == "__main__":
    main()
