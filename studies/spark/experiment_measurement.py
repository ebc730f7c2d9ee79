"""The speculation experiment's measurement (studies/spark/cluster_experiment.py): what one run's event
log says (stage times, the copies and their run time, where the tasks ran), the cut against the off
runs, and the record of a whole experiment as experiment.json holds it."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from stragglers.traces.spark_eventlog import discover, read_lines
from studies.spark.experiment_prediction import Predicted, Prediction, Rule
from studies.spark.experiment_workload import OFF, RECOMMENDED, WORKLOAD, Workload


def events(log: Path) -> Iterator[dict]:
    """Every event of one event log (a file or a rolling log's folder), read by the project's reader."""
    log = Path(log).resolve()
    found = [e for e in discover(log.parent)[0] if e.path.resolve() == log]
    if not found:
        raise ValueError(f"{log}: not an event log the project's reader finds")
    for path in found[0].files:
        for batch in read_lines(path, found[0].codec):
            yield from (json.loads(line) for line in batch.text.to_pylist() if line.strip())


@dataclass(frozen=True)
class Measured:
    """One application's workload stages (those of ``min_tasks`` tasks or more), from its event log;
    times in ms on Spark's clock, an attempt's run time is its finish minus its launch."""
    app_id: str
    stage_ms: tuple[float, ...]       # submission to completion, in submission order
    attempt_ms: float                 # run time of every attempt that is not a speculative copy
    copy_ms: float                    # of every speculative copy
    copies: int
    copies_won: int                   # copies that succeeded (their original was killed)
    won_copy_ms: float                # run time of those
    won_copy_hosts: tuple[str, ...]   # the host each of those ran on
    success_ms: tuple[float, ...]     # every successful attempt not a copy: what the replay draws copies from
    host_median_ms: dict[str, float]  # the median of those, per host
    original_host: dict[str, str]     # "stage position/task index" -> the host of its first attempt

    @property
    def extra_pct(self) -> float:
        return 100 * self.copy_ms / self.attempt_ms

    @property
    def copies_a_stage(self) -> float:
        return self.copies / len(self.stage_ms)


def measure(log: Path, min_tasks: int = WORKLOAD.tasks) -> Measured:
    app_id, submitted, stage_ms, attempts, first_hosts = "", {}, {}, [], []
    for e in events(log):
        kind = e["Event"]
        if kind == "SparkListenerApplicationStart":
            app_id = e["App ID"]
        elif kind == "SparkListenerStageCompleted" and e["Stage Info"]["Number of Tasks"] >= min_tasks:
            info = e["Stage Info"]
            key = (info["Stage ID"], info["Stage Attempt ID"])
            submitted[key] = info["Submission Time"]
            stage_ms[key] = info["Completion Time"] - info["Submission Time"]
        elif kind == "SparkListenerTaskStart" and e["Task Info"]["Attempt"] == 0:
            info = e["Task Info"]
            first_hosts.append(((e["Stage ID"], e["Stage Attempt ID"]), info["Index"], info["Host"]))
        elif kind == "SparkListenerTaskEnd":
            info = e["Task Info"]
            attempts.append(((e["Stage ID"], e["Stage Attempt ID"]), info["Speculative"], info["Host"],
                             info["Finish Time"] - info["Launch Time"], e["Task End Reason"]["Reason"] == "Success"))
    order = sorted(stage_ms, key=submitted.get)
    attempts = [a for a in attempts if a[0] in stage_ms]
    copies = [a for a in attempts if a[1]]
    originals = [a for a in attempts if not a[1]]
    success = [a for a in originals if a[4]]
    hosts = sorted({a[2] for a in success})
    return Measured(app_id, tuple(stage_ms[k] for k in order),
                    sum(a[3] for a in originals), sum(a[3] for a in copies), len(copies),
                    sum(a[4] for a in copies), sum(a[3] for a in copies if a[4]), tuple(a[2] for a in copies if a[4]),
                    tuple(a[3] for a in success),
                    {h: statistics.median(a[3] for a in success if a[2] == h) for h in hosts},
                    {f"{order.index(stage)}/{index}": host for stage, index, host in first_hosts
                     if stage in stage_ms})


def cut_pct(run: Measured, reference_ms: list[float]) -> float:
    """The stage-time cut of ``run`` against ``reference_ms`` (the off runs' mean time of each stage,
    matched by order), percent of the reference's total."""
    if len(run.stage_ms) != len(reference_ms):
        raise ValueError(f"{run.app_id}: {len(run.stage_ms)} workload stages, the off runs have {len(reference_ms)}")
    return 100 * (sum(reference_ms) - sum(run.stage_ms)) / sum(reference_ms)


def copy_lateness(log: Path, rule: Rule, min_tasks: int = WORKLOAD.tasks) -> list[float]:
    """For each speculative copy in the log's workload stages: how long its original had run when the
    copy launched, over ``rule``'s threshold then (multiplier x the median of the stage's successful
    durations by then, at least minTaskRuntime). 1 is a copy launched the moment its original crossed
    the threshold; more is the wait for the timer, the quantile of successes, or a free core."""
    tasks, launch, successes, out = {}, {}, {}, []
    for e in events(log):
        if e["Event"] == "SparkListenerStageSubmitted":
            tasks[e["Stage Info"]["Stage ID"]] = e["Stage Info"]["Number of Tasks"]
        elif e["Event"] == "SparkListenerTaskStart" and tasks.get(e["Stage ID"], 0) >= min_tasks:
            info = e["Task Info"]
            if not info["Speculative"]:
                launch[e["Stage ID"], info["Index"]] = info["Launch Time"]
                continue
            done = [d for f, d in successes.get(e["Stage ID"], ()) if f <= info["Launch Time"]]
            threshold = max(rule.multiplier * statistics.median(done), rule.min_task_runtime_ms)
            out.append((info["Launch Time"] - launch[e["Stage ID"], info["Index"]]) / threshold)
        elif e["Event"] == "SparkListenerTaskEnd" and e["Task End Reason"]["Reason"] == "Success":
            info = e["Task Info"]
            successes.setdefault(e["Stage ID"], []).append(
                (info["Finish Time"], info["Finish Time"] - info["Launch Time"]))
    return out


def mean_stage_ms(runs: list[Measured]) -> list[float]:
    return [statistics.mean(stage) for stage in zip(*(r.stage_ms for r in runs))]


@dataclass(frozen=True)
class Spread:
    mean: float
    lo: float
    hi: float
    sd: float    # NaN for one run

    @classmethod
    def of(cls, values: list[float]) -> "Spread":
        return cls(statistics.mean(values), min(values), max(values),
                   statistics.stdev(values) if len(values) > 1 else math.nan)

    def text(self, digits: int = 1) -> str:
        sd = num(self.sd, digits)
        return f"{num(self.mean, digits)} ({num(self.lo, digits)} to {num(self.hi, digits)}, sd {sd})"


def num(value: float, digits: int = 1) -> str:
    # "or 0.0": a mean of cuts that cancel prints 0.0, not -0.0
    return "n/a" if math.isnan(value) else f"{round(value, digits) or 0.0:.{digits}f}"


@dataclass
class Run:
    setting: str
    number: int
    seconds: float                     # the driver's, from its start to its context's stop
    slowdown_by_host: dict[str, list]  # what the tasks read on each host
    log: str
    measured: Measured


@dataclass
class Experiment:
    workload: Workload
    runs_per_setting: int
    prediction: Prediction
    runs: list[Run]
    seconds: float
    load_start: tuple[float, float, float]
    load_end: tuple[float, float, float]
    command: str = ""            # the command line that ran it
    commit: str = ""             # git's short HEAD then, "with uncommitted changes" where the tree differed
    finished: str = ""           # UTC

    @classmethod
    def load(cls, path: Path) -> "Experiment":
        """An experiment as ``main`` wrote it (experiment.json)."""
        d = json.loads(Path(path).read_text())
        p = d["prediction"]
        settings = {k: Predicted(**{**v, "rule": Rule(**v["rule"]) if v["rule"] else None})
                    for k, v in p["settings"].items()}
        runs = [Run(**{**r, "measured": Measured(**{k: tuple(v) if isinstance(v, list) else v
                                                    for k, v in r["measured"].items()})}) for r in d["runs"]]
        return cls(**{**d, "workload": Workload(**d["workload"]), "prediction": Prediction(**{**p, "settings": settings}),
                      "runs": runs, "load_start": tuple(d["load_start"]), "load_end": tuple(d["load_end"])})

    def of(self, setting: str) -> list[Run]:
        if setting == RECOMMENDED and self.prediction.settings[RECOMMENDED].rule is None:
            setting = OFF   # keep off: the off runs are its runs
        return [r for r in self.runs if r.setting == setting]
