"""The one replay engine against the sweep it replaced, on the same jobs and methods, in ONE run.

    python -m benchmarks.engine [--baseline 1eaacb7] [--methods flag_all,...] [--repeat 2] [--write docs/BENCHMARKS.md]

Both sides evaluate the same methods under the operator's protocol on copies of one warehouse (the
embedded default trace, built once here by this checkout's code), one worker process each, one
method at a time: the baseline is the code of ``--baseline`` (a ``git worktree`` of that commit,
first on PYTHONPATH), whose sweep scored each point uncapped at its flags and under the caps at
the method's own flag times (the capped oracle at 200 decisions); the subject is this checkout,
whose engine scores every point of every method at every check of the job under every cap
(uncapped, Hadoop's caps and each budget). Each side runs in its own process
(benchmarks/engine_side.py), the two alternating over ``--repeat`` rounds; medians are reported,
wall clock and CPU time of each evaluation (the replay of the method, then its copies), and the
ratio baseline / engine (above 1: the engine is faster). With ``--write`` the result replaces the
section "The replay engine against the sweep it replaced" of that file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.results import WRITE_HELP, publish_section

REPO = Path(__file__).resolve().parent.parent
SECTION = "## The replay engine against the sweep it replaced"
#: the last commit before the engine
BASELINE = "1eaacb7"
METHODS = ("flag_all", "spark_speculation", "km_survival", "oracle", "nurd", "iforest")


def build_warehouse(work: Path) -> Path:
    """The embedded default trace's warehouse (this checkout's code), in ``work``."""
    import duckdb

    from stragglers.settings import SelectionSettings
    from stragglers.traces.fetch import fetch_trace
    from stragglers.warehouse.assemble import build_warehouse as build

    raw = work / "raw"
    fetch_trace("synthetic", raw, log=lambda _: None)
    db = work / "warehouse.duckdb"
    con = duckdb.connect(str(db))
    build(con, next(p for p in raw.rglob("task_events")).parent, SelectionSettings())
    con.close()
    return db


def worktree(commit: str, work: Path) -> Path:
    """A checkout of ``commit`` beside the work files (git worktree, removed by ``drop_worktree``)."""
    path = work / f"baseline-{commit}"
    if not path.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), commit], check=True,
                       capture_output=True)
    return path


def drop_worktree(path: Path) -> None:
    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], capture_output=True)


def side(root: Path, warehouse: Path, work: Path, methods: list[str]) -> dict[str, dict]:
    """One side's evaluation of ``methods`` (benchmarks/engine_side.py with ``root`` first on the path)."""
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1")
    work.mkdir(parents=True, exist_ok=True)
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "engine_side.py"), str(warehouse), str(work),
                          ",".join(methods)], env=env, cwd=work, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{root}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    got = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if any(Path(g["package"]).parent != root for g in got):
        raise RuntimeError(f"the side meant to run {root} imported {got[0]['package']}")
    return {g["method"]: g for g in got}


def run(baseline: str, methods: list[str], repeat: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        work = Path(tmp)
        warehouse = build_warehouse(work)
        base = worktree(baseline, work)
        try:
            rounds = {"baseline": [], "engine": []}
            for r in range(repeat):
                for name, root in (("baseline", base), ("engine", REPO)):
                    rounds[name].append(side(root, warehouse, work / f"{name}-{r}", methods))
                    print(f"round {r + 1}: {name} done", file=sys.stderr, flush=True)
        finally:
            drop_worktree(base)
    res = {"baseline": baseline, "methods": methods, "repeat": repeat, "per_method": {}}
    for m in methods:
        res["per_method"][m] = {
            name: {k: statistics.median(x[m][k] for x in rounds[name]) for k in ("wall", "cpu")}
            | {"jobs": rounds[name][0][m]["jobs"], "rows": rounds[name][0][m]["rows"]}
            for name in rounds}
    return res


def report(res: dict, command: str) -> str:
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [SECTION, "",
             f"Written by `{command}` at commit {commit} on {datetime.now(timezone.utc):%Y-%m-%d}, load "
             f"{os.getloadavg()[0]:.1f} at the end (2 cores); baseline: commit {res['baseline']}, the sweep before "
             f"the engine. Medians of {res['repeat']} alternating rounds, one worker process each, the operator's "
             f"evaluation of one method on the embedded default trace ({next(iter(res['per_method'].values()))['engine']['jobs']} "
             f"jobs). Rows: what each side scored (baseline: uncapped points + capped points at 5 caps; engine: every "
             f"point under 6 caps, uncapped among them).", "",
             "| method | baseline wall s | engine wall s | wall ratio | baseline CPU s | engine CPU s | CPU ratio | rows baseline / engine |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for m, d in res["per_method"].items():
        b, e = d["baseline"], d["engine"]
        rows_b = sum(b["rows"].values())
        rows_e = sum(e["rows"].values())
        lines.append(f"| {m} | {b['wall']:.1f} | {e['wall']:.1f} | {b['wall'] / e['wall']:.2f} | {b['cpu']:.1f} | "
                     f"{e['cpu']:.1f} | {b['cpu'] / e['cpu']:.2f} | {rows_b} / {rows_e} |")
    tb = sum(d["baseline"]["wall"] for d in res["per_method"].values())
    te = sum(d["engine"]["wall"] for d in res["per_method"].values())
    lines += ["", f"All {len(res['per_method'])} methods: baseline {tb:.1f} s, engine {te:.1f} s of wall clock "
                  f"(ratio {tb / te:.2f})."]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine", description=__doc__.splitlines()[0])
    p.add_argument("--baseline", default=BASELINE)
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--write", type=Path, default=None, help=WRITE_HELP)
    a = p.parse_args()
    res = run(a.baseline, a.methods.split(","), a.repeat)
    command = "python -m benchmarks.engine" + "".join(
        f" --{k} {v}" for k, v in (("baseline", a.baseline if a.baseline != BASELINE else None),
                                   ("methods", a.methods if a.methods != ",".join(METHODS) else None),
                                   ("repeat", a.repeat if a.repeat != 2 else None),
                                   ("write", a.write)) if v)
    text = report(res, command)
    publish_section(text, a.write, SECTION)


if __name__ == "__main__":
    main()
