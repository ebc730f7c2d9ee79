"""`nurd-spark advise`: one application from the command to the printed answer, and a directory of
1,000 logs in bounded memory, each beside the decompression floor in the same run.

    python -m benchmarks.spark_advise [--logs DIR] [--repeat 5] [--many 1000] [--write docs/BENCHMARKS.md]
        [--write-readme README.md]

(a) The command as a user types it, a whole process each time (imports, staging, the engine on
    every setting of Spark's grid, the answer, the files), on nds_q72 alone (13.5k tasks), against
    `zstd -dc LOG | wc -l` (reading the log and nothing else): wall clock and CPU time of the process
    and its children, medians of ``--repeat`` alternating runs. The target: at most 5 s, idle.
(b) ``--many`` logs (copies of a small multi-host real log, each with its own application id, so
    none is a duplicate; ``--min-tasks 2``, its stages being small) in one directory: the command's wall clock, CPU time and peak resident
    memory (``ru_maxrss`` of the child), against `zstd -dc` of every log (the floor), and the same at a
    tenth of the logs, both at NURD_DUCKDB_MEMORY_LIMIT=512MB: memory that does not grow with the number
    of logs is bounded by DuckDB's limit and the batches' size, not by the directory.
``--write`` replaces the section "Spark event logs: nurd-spark advise" of that file;
``--write-readme`` replaces the README's example (between its ``nurd-spark example`` markers) with
the command and its output on the shared real logs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import zstandard

from benchmarks.results import publish_section

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Spark event logs: nurd-spark advise"
DEFAULT_LOGS = REPO.parent / "shared" / "realdata" / "spark_eventlogs"
ONE = "nds_q72_dataproc_2_2.zstd"
TEMPLATE = "eventlog_4nodes_8cores_dynamic_alloc.zstd"
#: DuckDB's memory limit for the many-logs runs: the bound their peak is held to (plus a fixed overhead).
MANY_LIMIT = "512MB"
README_START, README_END = "<!-- nurd-spark example: written by python -m benchmarks.spark_advise --write-readme -->", \
    "<!-- end of nurd-spark example -->"


def command() -> list[str]:
    script = Path(sys.executable).parent / "nurd-spark"
    return [str(script)] if script.exists() else [sys.executable, "-m", "stragglers.advice.spark"]


def timed(cmd: list[str] | str, shell: bool = False, env: dict | None = None) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the children, peak RSS of the children in KiB, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(cmd, shell=shell, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise RuntimeError(f"{cmd}: exit {out.returncode}: {out.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss, out.stdout


def many_logs(template: Path, out: Path, n: int) -> None:
    """``n`` copies of ``template`` under ``out``, each with its own application id."""
    text = zstandard.ZstdDecompressor().stream_reader(template.open("rb")).read()
    first_app = next(json.loads(line)["App ID"] for line in text.splitlines()
                     if line.startswith(b'{"Event":"SparkListenerApplicationStart"'))
    compressor = zstandard.ZstdCompressor(level=3)
    out.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        new_id = f"{first_app}-copy{i:05d}"
        (out / f"{new_id}.zstd").write_bytes(compressor.compress(text.replace(first_app.encode(), new_id.encode())))


def run(logs: Path, repeat: int, many: int) -> dict:
    res: dict = {"repeat": repeat, "many": many}
    with tempfile.TemporaryDirectory(prefix="bench-advise-") as tmp:
        work = Path(tmp)
        one = work / "one"
        one.mkdir()
        shutil.copyfile(logs / ONE, one / ONE)
        advise, floor = [], []
        for r in range(repeat):
            advise.append(timed(command() + ["advise", str(one), "--out", str(work / f"one-{r}.conf")]))
            floor.append(timed(f"zstd -dc {one / ONE} | wc -l", shell=True))
        res["one"] = {"advise_wall": statistics.median(a[0] for a in advise),
                      "advise_cpu": statistics.median(a[1] for a in advise),
                      "floor_wall": statistics.median(f[0] for f in floor),
                      "floor_cpu": statistics.median(f[1] for f in floor), "output": advise[0][3]}
        print(f"one application: {res['one']['advise_wall']:.2f} s", file=sys.stderr, flush=True)
        for count in (many // 10, many):
            d = work / f"many-{count}"
            many_logs(logs / TEMPLATE, d, count)
            # the template's stages are small: --min-tasks 2 gives the answer something to act on
            wall, cpu, rss, printed = timed(command() + ["advise", str(d), "--min-tasks", "2",
                                                   "--out", str(work / f"many-{count}.conf")],
                                      env={**os.environ, "NURD_DUCKDB_MEMORY_LIMIT": MANY_LIMIT})
            fwall, fcpu, _, _ = timed(f"for f in {d}/*.zstd; do zstd -dc \"$f\"; done | wc -l", shell=True)
            stages = re.search(r"(\d+) stages from \d+ applications", printed)
            res[f"many_{count}"] = {"wall": wall, "cpu": cpu, "rss_kib": rss, "floor_wall": fwall, "floor_cpu": fcpu,
                                    "bytes": sum(p.stat().st_size for p in d.iterdir()),
                                    "stages": int(stages.group(1)) if stages else None}
            print(f"{count} logs: {wall:.1f} s, peak {rss / 1024:.0f} MiB", file=sys.stderr, flush=True)
            shutil.rmtree(d)
    return res


def report(res: dict, argv: str) -> str:
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    o = res["one"]
    lines = [SECTION, "",
             f"Written by `python -m benchmarks.spark_advise{argv}` at commit {commit} on "
             f"{datetime.now(timezone.utc):%Y-%m-%d}, load {os.getloadavg()[0]:.1f} at the end (2 cores). Each "
             f"figure a whole process as a user runs it, medians of {res['repeat']} alternating runs.", "",
             "| what | wall s | CPU s | against the floor (wall / CPU) |", "|---|---:|---:|---|",
             f"| `nurd-spark advise` on nds_q72 (13.5k tasks), command to printed answer | {o['advise_wall']:.2f} | "
             f"{o['advise_cpu']:.2f} | {o['advise_wall'] / o['floor_wall']:.1f}x / {o['advise_cpu'] / max(o['floor_cpu'], 1e-3):.1f}x |",
             f"| the floor: `zstd -dc` of it, lines counted | {o['floor_wall']:.2f} | {o['floor_cpu']:.2f} | 1x |"]
    for key in sorted(k for k in res if k.startswith("many_")):
        m, n = res[key], int(key.split("_")[1])
        lines.append(f"| {n} logs ({m['bytes'] / 2**20:.0f} MiB compressed), NURD_DUCKDB_MEMORY_LIMIT={MANY_LIMIT}: "
                     f"`nurd-spark advise`, peak resident "
                     f"{m['rss_kib'] / 1024:.0f} MiB | {m['wall']:.1f} | {m['cpu']:.1f} | "
                     f"{m['wall'] / m['floor_wall']:.1f}x / {m['cpu'] / max(m['floor_cpu'], 1e-3):.1f}x |")
    lines += ["", f"The target for one application: 5 s on an idle machine "
                  f"({'met' if o['advise_wall'] <= 5 else 'not met'} in this run)."]
    counts = sorted(int(k.split("_")[1]) for k in res if k.startswith("many_"))
    if len(counts) == 2:
        a, b = (res[f"many_{n}"] for n in counts)
        few, many = a["rss_kib"] / 1024, b["rss_kib"] / 1024
        per_stage = (many - few) * 1024 / (b["stages"] - a["stages"]) if a["stages"] and b["stages"] else float("nan")
        lines += ["", f"Memory: the peak at {counts[1]} logs ({b['stages']} stage attempts) is {many / few:.1f}x the "
                      f"peak at {counts[0]} ({a['stages']}), {many - few:.0f} MiB more: {per_stage:.0f} KiB per stage "
                      f"attempt. " + ("Bounded: it does not grow with the number of logs." if many / few < 1.5 else
                      "DuckDB stays within its limit and the logs are read and replayed in batches; what grows is the "
                      "answer's own input, every setting of Spark's grid on every stage attempt (held in memory to "
                      "choose each stage's setting on the stages before it): linear in the stage attempts.")]
    return "\n".join(lines)


def write_readme(readme: Path, logs: Path) -> None:
    """The README's example: the command on the shared logs and what it printed."""
    shown = os.path.relpath(logs, REPO)
    with tempfile.TemporaryDirectory() as tmp:    # run where a user would: the conf lands in the working directory
        out = subprocess.run(command() + ["advise", str(Path(REPO, shown).resolve())], capture_output=True,
                             text=True, cwd=tmp)
    if out.returncode:
        raise RuntimeError(f"nurd-spark advise {shown}: exit {out.returncode}: {out.stderr.strip()[-400:]}")
    printed = out.stdout.rstrip()
    block = [README_START, "```", f"$ nurd-spark advise {shown}", printed, "```", README_END]
    text = readme.read_text()
    a, b = text.index(README_START), text.index(README_END) + len(README_END)
    readme.write_text(text[:a] + "\n".join(block) + text[b:])


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.spark_advise", description=__doc__.splitlines()[0])
    p.add_argument("--logs", type=Path, default=DEFAULT_LOGS)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--many", type=int, default=1000)
    p.add_argument("--write", type=Path, default=None)
    p.add_argument("--write-readme", type=Path, default=None)
    a = p.parse_args()
    if not (a.logs / ONE).is_file():
        sys.exit(f"no {ONE} under {a.logs} (--logs; the real logs are in shared/realdata/spark_eventlogs)")
    if a.write_readme:
        write_readme(a.write_readme, a.logs)
    if a.write or not a.write_readme:
        res = run(a.logs, a.repeat, a.many)
        argv = "".join(f" {x}" for x in sys.argv[1:])
        text = report(res, argv)
        publish_section(text, a.write, SECTION)


if __name__ == "__main__":
    main()
