"""The speculation advice held to a real Spark cluster: its predicted stage-time cut and extra executor
time against the ones measured with each setting.

On the standalone cluster of tests/spark_cluster.py (two workers, the one on the slow host started
with its tasks ``slowdown`` times slower: tests/spark_workload.py), the workload (a few stages of
sleeping tasks in waves, a few skewed partitions a stage) runs ``--runs`` times with speculation off,
every run's event log in one directory, as an operator's ``spark.eventLog.dir`` holds a job's history.
The advice reads that directory (``predict``): its recommended setting, and for it, Spark 4's defaults
and speculation off, the stage-time cut with its 95% interval, the extra executor time and the copies.
The recommended setting and Spark 4's defaults then run ``--runs`` times each, in turn, and each run's
log gives the measured numbers (``measure``): the cut against the off runs' mean stage times, stage by
stage in order, and the speculative attempts' run time over the others'. ``--doc`` writes the table,
and paragraphs saying where a prediction missed and why, whole into the page.

    .venv/bin/python -m studies.spark.cluster_experiment --out DIR [--runs N] [--doc docs/SPARK_EXPERIMENT.md]
    .venv/bin/python -m studies.spark.cluster_experiment --from DIR --doc docs/SPARK_EXPERIMENT.md

``--from`` writes the page again from a finished run's experiment.json (its command, commit and date
with it), running nothing. Run it from the project root with ``-m``: it imports the cluster harness
from tests/.

This module runs the experiment; its parts are beside it: the workload and the settings
(experiment_workload.py), the advice's prediction (experiment_prediction.py), what a run's log
measures and the experiment's record (experiment_measurement.py), and the page (experiment_page.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from studies.spark.experiment_measurement import Experiment, Run, measure
from studies.spark.experiment_page import COMMAND, page, reading, table
from studies.spark.experiment_prediction import predict
from studies.spark.experiment_workload import (
    DEFAULTS, NO_EFFICIENCY_CHECK, OFF, OFF_CONF, RECOMMENDED, WORKLOAD, Workload, run_application,
)

REPO = Path(__file__).resolve().parents[2]


def progress(started: float, text: str) -> None:
    print(f"[{time.monotonic() - started:6.0f} s] {text}", file=sys.stderr, flush=True)


def run_experiment(out: Path, runs: int, workload: Workload = WORKLOAD) -> Experiment:
    """The off runs, the prediction on their logs, then the recommended setting and Spark 4's defaults
    in turn, ``runs`` times each, all on one cluster under ``out/cluster``; each setting's event logs
    in ``out/eventlogs/<setting>/``."""
    from tests import spark_workload   # tests/ is importable from the project root only (python -m)

    started, load_start = time.monotonic(), os.getloadavg()
    done: list[Run] = []
    with spark_workload.slowed_cluster(out / "cluster", workload.slow_host, workload.slowdown,
                                       workload.cores) as cluster:
        progress(started, f"cluster up in {cluster.start_seconds:.1f} s")

        def run(setting: str, number: int, conf: dict[str, str]) -> None:
            name = f"{setting}-{number}"
            progress(started, f"{name}: start")
            result = run_application(cluster, workload, name, conf, out / "eventlogs" / setting)
            done.append(Run(setting, number, result["seconds"], result["slowdown_by_host"], result["log"],
                            measure(Path(result["log"]), workload.tasks)))
            progress(started, f"{name}: end, {result['seconds']:.1f} s, {done[-1].measured.copies} copies")

        for number in range(1, runs + 1):
            run(OFF, number, OFF_CONF)
        prediction = predict(out / "eventlogs" / OFF, workload.tasks)
        progress(started, f"predicted on the off runs: {prediction.advice[0]}")
        confs = {DEFAULTS: prediction.settings[DEFAULTS].conf}
        if prediction.settings[RECOMMENDED].rule is not None:
            confs[RECOMMENDED] = prediction.settings[RECOMMENDED].conf | NO_EFFICIENCY_CHECK
        for number in range(1, runs + 1):
            for setting in (RECOMMENDED, DEFAULTS):
                if setting in confs:
                    run(setting, number, confs[setting])
    return Experiment(workload, runs, prediction, done, time.monotonic() - started, load_start, os.getloadavg())


def checkout() -> str:
    """git's short HEAD, and whether the tree differs from it."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    return commit + (" with uncommitted changes" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description="Run a workload with one slow host on a local Spark standalone cluster with speculation "
                    "off, ask the speculation advice on the off runs' event logs, run its recommended "
                    "setting and Spark 4's defaults, and compare the predicted stage-time cut and extra "
                    "executor time with the measured ones. Run from the project root with "
                    f"'.venv/bin/{COMMAND}'.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path,
                       help="directory to write into (created; must be empty): eventlogs/, cluster/, experiment.json")
    where.add_argument("--from", dest="source", type=Path,
                       help="run nothing: write the page from an earlier run's directory (its experiment.json)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each setting (default 3)")
    parser.add_argument("--doc", type=Path, help="write the page, whole, there (docs/SPARK_EXPERIMENT.md)")
    args = parser.parse_args(argv)
    if args.source:
        if not (args.source / "experiment.json").is_file():
            print(f"{args.source}: no experiment.json (give the --out directory of a finished run)", file=sys.stderr)
            return 2
        return publish(Experiment.load(args.source / "experiment.json"), args.doc)
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: at least one run of each setting")
    if args.out.exists() and any(args.out.iterdir()):
        print(f"{args.out} is not empty: give a new or empty directory", file=sys.stderr)
        return 2
    try:
        from tests.spark_cluster import java_missing_reason   # tests/ is importable from the project root only
    except ModuleNotFoundError:
        print(f"run it from the project root as '.venv/bin/{COMMAND}': it imports the cluster harness from tests/",
              file=sys.stderr)
        return 2
    reason = java_missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    commit = checkout()   # the code that runs, before anything changes it
    exp = run_experiment(args.out, args.runs)
    exp.command, exp.commit = " ".join([COMMAND, *argv]), commit
    exp.finished = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    (args.out / "experiment.json").write_text(json.dumps(asdict(exp), indent=1) + "\n")
    return publish(exp, args.doc)


def publish(exp: Experiment, doc: Path | None) -> int:
    print(table(exp) + "\n\n" + reading(exp))
    if doc:
        doc.write_text(page(exp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
