"""Measure the wall-clock times the README quotes, on this machine, and write docs/TIMINGS.md.

Usage (from the project root, with the project's venv):

    .venv/bin/python -m benchmarks.timings                    # command1, comparison, baselines
    .venv/bin/python -m benchmarks.timings --steps install,command1,comparison,baselines,tests
    .venv/bin/python -m benchmarks.timings --steps ''        # measure nothing, rewrite the file

Steps (each in a fresh data dir and a fresh Dagster instance under a temporary
directory, nothing of the user's data is touched):

- ``install``: a fresh clone of the committed project, ``python3.11 -m venv``
  and ``pip install -e ".[test]"`` with pip's cache off (what a new user
  waits for; needs PyPI);
- ``command1``: README command 1 after the install (``scripts/main_job.sh``:
  ``*nurd_eval``, the reference rules, ``comparison_tables`` and the
  end-of-run summary) on the embedded trace;
- ``comparison``: ``comparison_tables`` alone after the baselines (or after
  command1 when the baselines are not measured);
- ``baselines``: the 20 baselines in one run (``--partition-range
  abod...xgbod``);
- ``protocol_ablation``, ``nurd_sensitivity``: the two studies of
  docs/EVALUATION.md, each in one run after the steps before it;
- ``tests``: README command 2 after the install (``scripts/test.sh``, with the
  install's Python), which also lists the 10 slowest tests (pytest's
  ``--durations``) below the table.

The machine's load is part of the result: the 1-minute load average is
sampled every 5 s during each step and reported with the cores, so a time
measured on a busy machine says so. The file has one row per step: a step
measured replaces its row, the others are kept as they were. Re-run on an idle machine for the
README's "idle 2 cores" figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from stragglers.prediction.methods import REFERENCE_RULES   # what scripts/main_job.sh runs

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("install", "command1", "baselines", "comparison", "protocol_ablation", "nurd_sensitivity", "tests")
DEFAULT_STEPS = ("command1", "baselines", "comparison")
README_COMMANDS = {
    "install": 'bash scripts/setup.sh   (python3.11 -m venv .venv; pip install -e ".[test]")',
    "command1": f"scripts/main_job.sh (command 1 after the install: *nurd_eval, the {len(REFERENCE_RULES)} reference "
                "rules, comparison_tables, summary)",
    "baselines": "dagster asset materialize -m pipeline --select baseline_eval --partition-range 'abod...xgbod'",
    "comparison": "dagster asset materialize -m pipeline --select completion_times,operator_budgets,comparison_tables",
    "protocol_ablation": "dagster asset materialize -m pipeline --select protocol_ablation",
    "nurd_sensitivity": "dagster asset materialize -m pipeline --select nurd_sensitivity",
    "tests": "bash scripts/test.sh --durations=0 (README command 2 after the install)",
}
#: how many of the slowest tests the ``tests`` step lists
SLOWEST = 10
SLOWEST_HEADING = "## The slowest tests"
SLOWEST_COLUMNS = ("test", "seconds", "of which setup")


class LoadSampler:
    """Mean and max of the 1-minute load average while a step runs."""

    def __init__(self, every_s: float = 5.0):
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every_s,), daemon=True)

    def _run(self, every_s: float) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(every_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run_step(name: str, cmd: list[str], env: dict, cwd: Path, log: Path) -> dict:
    print(f"[timings] {name}: {' '.join(cmd)}", flush=True)
    started = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with LoadSampler() as load, open(log, "w") as out:
        # a session of its own: an interrupted step is stopped with its worker processes
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            proc.wait()
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    seconds = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    if proc.returncode != 0:
        # the temporary directory (and the log) is removed on exit: show the log's end now
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-40:])
        raise SystemExit(f"[timings] {name} failed (exit {proc.returncode}); the end of its log:\n{tail}")
    row = {"step": name, "seconds": seconds, "cpu_seconds": cpu, "load_mean": sum(load.samples) / len(load.samples),
           "load_max": max(load.samples)}
    print(f"[timings] {name}: {_mmss(seconds)}, CPU {_mmss(cpu)} (load average mean {row['load_mean']:.1f}, "
          f"max {row['load_max']:.1f} on {os.cpu_count()} cores)", flush=True)
    return row


def _mmss(seconds: float) -> str:
    seconds = round(seconds)   # 59.6 s is 1:00, not 0:60
    return f"{seconds // 60}:{seconds % 60:02d}"


#: the table's columns, in order (a row read back from the file keeps its cells under these names)
COLUMNS = ("step", "command", "wall clock (m:ss)", "CPU (m:ss)", "load mean", "load max", "measured (UTC)", "commit")
#: older layouts of the file named some columns otherwise (rows measured by hand): their names here
OLD_NAMES = {"load": "load mean"}


def _row_cells(r: dict, commit: str) -> dict:
    now = dt.datetime.now(dt.timezone.utc)
    return dict(zip(COLUMNS, (r["step"], f"`{README_COMMANDS[r['step']]}`", _mmss(r["seconds"]),
                              _mmss(r["cpu_seconds"]), f"{r['load_mean']:.1f}", f"{r['load_max']:.1f}",
                              f"{now:%Y-%m-%d %H:%M}", f"`{commit}`")))


def read_rows(path: Path) -> dict[str, dict]:
    """Step -> the cells of its row in the file as it is: of every table in it whose first column is the
    step (older versions of the file had a second table of times measured by hand), the latest
    measurement of each step, so that the file written back has one row per step."""
    rows: dict[str, dict] = {}
    if not path.exists():
        return rows
    header: list[str] | None = None
    previous: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [OLD_NAMES.get(c, c) for c in cells]
            continue
        if cells[0] not in STEPS or len(cells) != len(header):
            continue
        row = {name: cell for name, cell in zip(header, cells) if name in COLUMNS}
        # the command is the script's for the step (the commit says which version of it was measured)
        row["command"] = f"`{README_COMMANDS[cells[0]]}`"
        if row.get("commit") == "same":   # older rows measured by hand said "same" for the row above's commit
            row["commit"] = previous.get("commit", "")
        previous = row
        if cells[0] not in rows or row.get("measured (UTC)", "") > rows[cells[0]].get("measured (UTC)", ""):
            rows[cells[0]] = row
    return rows


def slowest_tests(log: str, n: int = SLOWEST) -> list[tuple[str, float, float]]:
    """The ``n`` slowest tests in pytest's ``--durations`` report ``log``: (test id, seconds of its
    setup, call and teardown together, of which setup), slowest first. A module's fixtures are built
    in the setup of its first test that uses them, so that test carries their cost."""
    total: dict[str, float] = {}
    setup: dict[str, float] = {}
    for seconds, when, test in re.findall(r"^(\d+\.\d+)s (setup|call|teardown) +(\S.*?)\s*$", log, re.M):
        total[test] = total.get(test, 0.0) + float(seconds)
        if when == "setup":
            setup[test] = setup.get(test, 0.0) + float(seconds)
    ranked = sorted(total, key=lambda t: (-total[t], t))[:n]
    return [(t, total[t], setup.get(t, 0.0)) for t in ranked]


def _slowest_lines(slowest: list[tuple[str, float, float]], commit: str) -> list[str]:
    now = dt.datetime.now(dt.timezone.utc)
    return [
        SLOWEST_HEADING,
        "",
        f"The {len(slowest)} slowest tests of the `tests` step, measured with it ({now:%Y-%m-%d %H:%M} UTC, "
        f"commit `{commit}`; pytest's `--durations`). \"seconds\" is the test's setup, call and teardown "
        "on its worker; a module's shared fixtures are built in the setup of the first test that uses them, "
        "so that test carries them. Under load, as the step's row says, every time is longer.",
        "",
        "| " + " | ".join(SLOWEST_COLUMNS) + " |",
        "|" + "---|" * len(SLOWEST_COLUMNS),
        *[f"| `{test}` | {seconds:.1f} | {setup:.1f} |" for test, seconds, setup in slowest],
    ]


def read_slowest(path: Path) -> list[str]:
    """The section of the slowest tests in the file as it is (kept when the tests are not measured)."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    if SLOWEST_HEADING not in lines:
        return []
    section = lines[lines.index(SLOWEST_HEADING):]
    while section and not section[-1].strip():
        section.pop()
    return section


def write_markdown(rows: list[dict], path: Path, commit: str,
                   slowest: list[tuple[str, float, float]] | None = None) -> None:
    """Write the table, one row per step: a step measured now replaces its row; the rows of steps not
    measured this time are kept from the file as they were. ``slowest`` (of the tests step measured
    now) replaces the list of the slowest tests below it; without it the list is kept."""
    cores = os.cpu_count()
    kept = read_rows(path) | {r["step"]: _row_cells(r, commit) for r in rows}
    below = _slowest_lines(slowest, commit) if slowest else read_slowest(path)
    lines = [
        "# Wall-clock times of the README's commands",
        "",
        "Written by `python -m benchmarks.timings` alone (re-run it to check them on your machine; a step it measures "
        "replaces that step's row, the others keep theirs, with the commit they were measured at). Each step "
        f"ran in a fresh data directory and a fresh Dagster instance, on {cores} cores, Python "
        f"{platform.python_version()}. \"load\" is the 1-minute load average "
        "sampled every 5 s during the step: on an idle machine it stays near what the step itself uses "
        f"(at most {cores}); higher means other work shared the cores. \"CPU\" is the user + system time "
        "of the step's processes, which other work hardly changes: on an idle machine the wall clock lies "
        f"between CPU / {cores} (all cores busy throughout) and CPU (one core at a time), plus time spent "
        "waiting on the network or the disk. A blank cell was not recorded.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
        *["| " + " | ".join(kept[s].get(c, "") for c in COLUMNS) + " |" for s in STEPS if s in kept],
        *([""] + below if below else []),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"[timings] wrote {path}")


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.timings", description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default=",".join(DEFAULT_STEPS),
                    help=f"comma-separated, from {','.join(STEPS)} (default {','.join(DEFAULT_STEPS)})")
    ap.add_argument("--out", default=str(ROOT / "docs" / "TIMINGS.md"))
    ap.add_argument("--keep-logs", type=Path, default=None,
                    help="copy each step's log (STEP.log) into this folder before the temporary one is removed")
    ap.add_argument("--synthetic-jobs", default=os.environ.get("NURD_SYNTHETIC_JOBS", "48"),
                    help="size of the embedded trace (the README's default: 48)")
    args = ap.parse_args()
    steps = [s for s in args.steps.split(",") if s]
    unknown = set(steps) - set(STEPS)
    if unknown:
        raise SystemExit(f"unknown steps {sorted(unknown)}; choose from {STEPS}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    # on SIGTERM: stop the running step and its workers, and remove the temporary directory
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="nurd-timings-"))
    rows = []
    slowest = None
    try:
        bin_dir = Path(sys.executable).parent
        project = ROOT
        if "install" in steps or "tests" in steps:
            project = work / "clone"
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(project)], check=True)
        if "install" in steps:
            py = shutil.which("python3.11") or sys.executable
            env = os.environ | {"PIP_NO_CACHE_DIR": "1"}
            rows.append(run_step("install", ["bash", "-c", f"'{py}' -m venv .venv && .venv/bin/python -m pip "
                                             "install --quiet --upgrade pip && .venv/bin/python -m pip install "
                                             "--quiet -e '.[test]'"], env, project, work / "install.log"))
            bin_dir = project / ".venv" / "bin"
        home = work / "dagster_home"
        home.mkdir()
        shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
        env = os.environ | {
            "NURD_DATA_DIR": str(work / "data"), "DAGSTER_HOME": str(home), "NURD_AUTOMATION": "off",
            "NURD_SYNTHETIC_JOBS": str(args.synthetic_jobs), "GX_ANALYTICS_ENABLED": "false",
            "DAGSTER_DISABLE_TELEMETRY": "1", "PYTHONPATH": str(project),
        }
        dagster = [str(bin_dir / "python"), "-m", "dagster", "asset", "materialize", "-m", "pipeline"]
        if "command1" in steps:
            rows.append(run_step("command1", ["bash", "scripts/main_job.sh"], env | {"PY": str(bin_dir / "python")},
                                 project, work / "command1.log"))
        if "baselines" in steps:
            rows.append(run_step("baselines", [*dagster, "--select", "baseline_eval", "--partition-range",
                                               "abod...xgbod"], env, project, work / "baselines.log"))
        if "comparison" in steps:
            rows.append(run_step("comparison", [*dagster, "--select",
                                                "completion_times,operator_budgets,comparison_tables"], env, project,
                                 work / "comparison.log"))
        for study in ("protocol_ablation", "nurd_sensitivity"):
            if study in steps:
                rows.append(run_step(study, [*dagster, "--select", study], env, project, work / f"{study}.log"))
        if "tests" in steps:
            # command 2 as a user runs it: none of the steps' NURD_* / DAGSTER_HOME (the tests set their own)
            user_env = {k: v for k, v in os.environ.items()
                        if k == "NURD_REALDATA_DIR" or not k.startswith(("NURD_", "DAGSTER_HOME"))}
            # scripts/test.sh with the install's Python (PY: no second setup), every test's durations
            # in the log for the list of the slowest
            rows.append(run_step("tests", ["bash", "scripts/test.sh", "--durations=0"],
                                 user_env | {"PY": str(bin_dir / "python")}, project, work / "tests.log"))
            slowest = slowest_tests((work / "tests.log").read_text(errors="replace"))
        order = {s: i for i, s in enumerate(STEPS)}
        write_markdown(sorted(rows, key=lambda r: order[r["step"]]), Path(args.out), commit, slowest)
    finally:
        if args.keep_logs:
            args.keep_logs.mkdir(parents=True, exist_ok=True)
            for log in work.glob("*.log"):
                shutil.copy(log, args.keep_logs / log.name)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
