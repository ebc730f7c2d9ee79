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
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

from stragglers.advice.spark import advise
from stragglers.prediction.engine.spark_rule import SPARK_4_DEFAULTS
from stragglers.settings import Settings
from stragglers.traces.spark_eventlog import discover, read_lines
from stragglers.warehouse.spark_staging import TRACE

REPO = Path(__file__).resolve().parents[2]
COMMAND = "python -m studies.spark.cluster_experiment"
#: The budget of extra executor time (percent of the stages' own) the advice is asked at.
BUDGET_PCT = 5.0
OFF, RECOMMENDED, DEFAULTS = "off", "recommended", "spark-4.0-defaults"
SETTINGS = (OFF, RECOMMENDED, DEFAULTS)
OFF_CONF = {"spark.speculation": "false"}
#: Spark 4's defaults as Spark 4 runs them: every other key at its default, the efficiency check on.
DEFAULTS_CONF = {"spark.speculation": "true"}
#: The replay models the rule without Spark's efficiency check (it needs the running tasks' progress,
#: which event logs do not keep), so the recommended setting runs without it.
NO_EFFICIENCY_CHECK = {"spark.speculation.efficiency.enabled": "false"}


# ---------------------------------------------------------------------------------------------------
# The workload

@dataclass(frozen=True)
class Workload:
    """``stages`` stages of ``tasks`` tasks over two workers of ``cores`` cores each (tests/spark_cluster.py's
    127.0.0.2 and 127.0.0.3); a task sleeps ``base_seconds`` x its partition's work (``skew`` for
    ``skewed`` partitions of each stage, else 1) x ``slowdown`` on ``slow_host``."""
    stages: int = 5
    tasks: int = 24
    base_seconds: float = 0.6
    skewed: int = 2
    skew: float = 4.0
    slowdown: float = 3.0
    cores: int = 2
    slow_host: str = "127.0.0.3"

    @property
    def slots(self) -> int:
        return 2 * self.cores

    def skewed_partitions(self, stage: int) -> list[int]:
        """Spread over the stage, and moved from stage to stage, so that skewed tasks start in
        different waves."""
        return sorted({(i * self.tasks // self.skewed + 3 + 5 * stage) % self.tasks for i in range(self.skewed)})

    def work(self) -> list[list[float]]:
        return [[self.skew if p in self.skewed_partitions(s) else 1.0 for p in range(self.tasks)]
                for s in range(self.stages)]

    def text(self) -> str:
        return (f"{self.stages} stages of {self.tasks} tasks on two workers of {self.cores} cores each "
                f"({self.slots} slots, so {self.tasks / self.slots:g} tasks a slot); a task sleeps "
                f"{self.base_seconds:g} s, x{self.skew:g} for {self.skewed} skewed partitions a stage, "
                f"x{self.slowdown:g} on the slow host {self.slow_host} (NURD_TASK_SLOWDOWN in its worker's "
                f"environment)")


WORKLOAD = Workload()


# ---------------------------------------------------------------------------------------------------
# The prediction: the advice's answer on the off runs' logs

@dataclass(frozen=True)
class Rule:
    quantile: float
    multiplier: float
    min_task_runtime_ms: float
    interval_ms: float

    def text(self) -> str:
        return (f"quantile {self.quantile:g}, multiplier {self.multiplier:g}, minTaskRuntime "
                f"{self.min_task_runtime_ms:g} ms")


@dataclass(frozen=True)
class Predicted:
    """What the advice says of one setting, per stage on the stages it scores (NaN: it scored none)."""
    rule: Rule | None            # None: speculation off
    conf: dict[str, str]         # the spark.speculation* keys to run it with
    cut_pct: float               # mean stage-time cut, percent of the stage's time
    cut_lo: float                # its 95% interval
    cut_hi: float
    extra_pct: float             # mean extra executor time, percent of the stage's own
    copies: float                # copies a stage


@dataclass(frozen=True)
class Prediction:
    settings: dict[str, Predicted]   # OFF, RECOMMENDED (rule None: keep speculation off), DEFAULTS
    advice: list[str]                # the advice in its own words, its first line the verdict
    scored: int                      # the stages the predictions are on
    stages: int                      # the stages it read


def predict(log_dir: Path, min_tasks: int = WORKLOAD.tasks) -> Prediction:
    """The advice on the event logs in ``log_dir`` (its stage attempts of ``min_tasks`` tasks, every
    one of which finishes: the workload's, not the warm-up) at BUDGET_PCT extra executor time: the
    setting it recommends and, for it, Spark 4's defaults and speculation off (what the logs ran), the
    predicted cut [95% interval], extra executor time and copies a stage. The advice is asked here
    only. Today it is ``nurd-spark advise`` (stragglers/advice/spark.py): it scores a stage on the
    stages that ended before it started, once enough have; its row for the recommended setting is
    "following this answer" (each scored stage run with the setting chosen on its earlier ones)."""
    settings = Settings.from_env({}, trace=TRACE, min_tasks=min_tasks, min_finished=min_tasks)
    answer, _ = advise(Path(log_dir), BUDGET_PCT / 100, settings=settings)
    rows = {r.who: r for r in answer.rows}

    def predicted(rule, conf: dict[str, str], who: str) -> Predicted:
        r = rows[who]
        return Predicted(rule and Rule(rule.quantile, rule.multiplier, 1000 * rule.min_task_runtime_s,
                                       1000 * rule.interval_s), conf,
                         100 * r.cut, 100 * r.cut_lo, 100 * r.cut_hi, 100 * r.extra, r.copies)

    chosen = answer.recommended
    return Prediction({OFF: predicted(None, OFF_CONF, "what you run"),
                       RECOMMENDED: predicted(chosen, conf_keys(answer.conf()) if chosen else OFF_CONF,
                                              "following this answer"),
                       DEFAULTS: predicted(SPARK_4_DEFAULTS, DEFAULTS_CONF, "Spark 4.0's defaults")},
                      answer.lines(), len(answer.split.scored), answer.stages)


def conf_keys(conf: str) -> dict[str, str]:
    """The spark.speculation* keys of a spark-defaults.conf block."""
    return dict(re.findall(r"^(spark\.speculation\S*)\s+(\S+)$", conf, re.M))


# ---------------------------------------------------------------------------------------------------
# The measurement: one run's log

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
        sd = _num(self.sd, digits)
        return f"{_num(self.mean, digits)} ({_num(self.lo, digits)} to {_num(self.hi, digits)}, sd {sd})"


def _num(value: float, digits: int = 1) -> str:
    # "or 0.0": a mean of cuts that cancel prints 0.0, not -0.0
    return "n/a" if math.isnan(value) else f"{round(value, digits) or 0.0:.{digits}f}"


# ---------------------------------------------------------------------------------------------------
# The experiment

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


def progress(started: float, text: str) -> None:
    print(f"[{time.monotonic() - started:6.0f} s] {text}", file=sys.stderr, flush=True)


def run_application(cluster, workload: Workload, name: str, conf: dict[str, str], log_dir: Path) -> dict:
    """One application of ``workload`` on ``cluster`` (tests/spark_workload.py's), with the speculation
    settings ``conf``, its event log written into ``log_dir``: the driver's result (app id, seconds,
    the slowdown the tasks read on each host, the log's path)."""
    from tests import spark_workload   # tests/ is importable from the project root only (python -m)

    settings = spark_workload.application_settings(cluster, name, workload.cores, log_dir, conf)
    return spark_workload.run_application(cluster, {"name": name, "settings": settings, "slots": workload.slots,
                                                    "base_seconds": workload.base_seconds,
                                                    "work": workload.work()}, log_dir)


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


# ---------------------------------------------------------------------------------------------------
# The page

def table(exp: Experiment) -> str:
    reference = mean_stage_ms([r.measured for r in exp.of(OFF)])
    rows = ["| setting | rule | cut % predicted [95% interval] | cut % measured: mean (min to max, sd) "
            "| measured mean in the interval | extra executor time % predicted | measured: mean (min to max, sd) "
            "| copies a stage predicted | measured: mean (min to max) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for setting in SETTINGS:
        p, measured = exp.prediction.settings[setting], [r.measured for r in exp.of(setting)]
        cut = Spread.of([cut_pct(m, reference) for m in measured])
        copies = Spread.of([m.copies_a_stage for m in measured])
        rule = p.rule.text() if p.rule else ("keep off (its runs are the off runs)" if setting == RECOMMENDED
                                              else "spark.speculation=false")
        rows.append(f"| {setting} | {rule} | {_num(p.cut_pct)} [{_num(p.cut_lo)}, {_num(p.cut_hi)}] | {cut.text()} "
                    f"| {within(p, cut.mean) if p.rule else 'the reference'} | {_num(p.extra_pct)} "
                    f"| {Spread.of([m.extra_pct for m in measured]).text()} | {_num(p.copies, 2)} "
                    f"| {_num(copies.mean, 2)} ({_num(copies.lo, 2)} to {_num(copies.hi, 2)}) |")
    return "\n".join(rows)


def within(p: Predicted, value: float) -> str:
    if math.isnan(p.cut_lo):
        return "no interval"
    if p.cut_lo <= value <= p.cut_hi:
        return "yes"
    return f"no ({'above' if value > p.cut_hi else 'below'})"


def skewed_on_slow_host(workload: Workload, run: Measured) -> int:
    """How many of the run's skewed partitions had their first attempt on the slow host."""
    return sum(run.original_host.get(f"{stage}/{p}") == workload.slow_host
               for stage in range(workload.stages) for p in workload.skewed_partitions(stage))


def reading(exp: Experiment) -> str:
    """Where each prediction missed, and the likely reasons, from the numbers."""
    w = exp.workload
    off = [r.measured for r in exp.of(OFF)]
    reference = mean_stage_ms(off)
    noise = Spread.of([cut_pct(m, reference) for m in off])
    slow = statistics.median(t for m in off for h, t in m.host_median_ms.items() if h == w.slow_host)
    fast = statistics.median(t for m in off for h, t in m.host_median_ms.items() if h != w.slow_host)
    skewed_off = statistics.mean(skewed_on_slow_host(w, m) for m in off)
    out = [f"On the off runs the median successful task ran {fast:.0f} ms on the fast host and {slow:.0f} ms on "
           f"the slow one (x{slow / fast:.2f}; the sleeps are {w.base_seconds * 1000:.0f} and "
           f"{w.base_seconds * w.slowdown * 1000:.0f} ms: PySpark adds about {fast - w.base_seconds * 1000:.0f} ms "
           f"to every task). "
           + (f"The off runs differ from their mean by sd {noise.sd:.1f} points of stage time "
              f"({noise.lo:.1f} to {noise.hi:.1f}), " if len(off) > 1 else "With one off run, the run-to-run "
              "spread is not measured; ")
           + f"much of it from where the skewed partitions land: {skewed_off:.1f} of a run's "
           f"{w.stages * w.skewed} started on the slow host in the off runs. The advice read the off runs' "
           f"{exp.prediction.stages} stages and scored {exp.prediction.scored} of them (a stage is scored on the "
           f"stages that ended before it started); its interval resamples those stages, not whole runs."]
    # a base task's time on the fast host less its sleep is PySpark's own, CPU-bound: it grows with the load
    fast_task = {s: statistics.median(t for r in exp.of(s) for h, t in r.measured.host_median_ms.items()
                                      if h != w.slow_host) for s in SETTINGS if any(r.setting == s for r in exp.runs)}
    out.append(f"The machine is shared: its load average went from {exp.load_start[0]:.1f} to {exp.load_end[0]:.1f} "
               f"on {os.cpu_count()} cores over the experiment. The median task on the fast host ran "
               + ", ".join(f"{ms:.0f} ms in the {s} runs" for s, ms in fast_task.items())
               + f" (the sleep is {w.base_seconds * 1000:.0f} ms); the rest is PySpark's own CPU time, which grows "
               f"with the load, and the stage times with it: a setting whose runs met a busier machine measures a "
               f"smaller cut than speculation gave it, and a lighter one a larger.")
    pool = statistics.mean(t for m in off for t in m.success_ms)
    for setting in (RECOMMENDED, DEFAULTS):
        p, runs = exp.prediction.settings[setting], exp.of(setting)
        if p.rule is None:
            out.append("The advice recommends keeping speculation off, so its row repeats the off runs.")
            continue
        measured = [r.measured for r in runs]
        cut, extra = Spread.of([cut_pct(m, reference) for m in measured]), Spread.of([m.extra_pct for m in measured])
        copies, made, won = (statistics.mean(m.copies_a_stage for m in measured), sum(m.copies for m in measured),
                             sum(m.copies_won for m in measured))
        skewed = statistics.mean(skewed_on_slow_host(w, m) for m in measured)
        verdict = within(p, cut.mean)
        position = ("not predicted (the advice scored no stage)" if verdict == "no interval" else
                    f"{'within' if verdict == 'yes' else verdict[4:-1]} the predicted interval "
                    f"[{_num(p.cut_lo)}, {_num(p.cut_hi)}]")
        # > 0: the miss is a cut above the interval (the prediction too low); < 0: below it
        miss = cut.mean - p.cut_hi if verdict == "no (above)" else cut.mean - p.cut_lo if verdict == "no (below)" else 0
        line = (f"{setting}: the measured cut, {cut.mean:.1f}%, is {position}; {copies:.2f} copies a stage "
                f"against {_num(p.copies, 2)} predicted, extra executor time {extra.mean:.1f}% against "
                f"{_num(p.extra_pct)}%.")
        if len(off) > 1:
            # a difference of two means of runs, each as spread as the off runs
            se = noise.sd * math.sqrt(1 / len(measured) + 1 / len(off))
            line += (f" Run to run, this mean is uncertain by about {se:.1f} points (the off runs' sd, for a "
                     f"difference of a mean of {len(measured)} runs and one of {len(off)})"
                     + (f": the miss, {abs(miss):.1f} points past the interval, is {abs(miss) / se:.1f} of those."
                        if miss else "."))
        # fewer skewed partitions on the slow host, or a lighter machine, shorten stages with or without copies
        line += (f" Its runs had {skewed:.1f} skewed partitions a run start on the slow host against {skewed_off:.1f} "
                 f"in the off runs, which by itself {'raises' if skewed < skewed_off else 'lowers'} its measured cut, "
                 f"and met a {'lighter' if fast_task[setting] < fast_task[OFF] else 'heavier'} machine (a fast-host "
                 f"task {fast_task[setting]:.0f} ms against {fast_task[OFF]:.0f}), which "
                 f"{'raises' if fast_task[setting] < fast_task[OFF] else 'lowers'} it.")
        if won:
            won_ms = sum(m.won_copy_ms for m in measured) / won
            on_fast = sum(h != w.slow_host for m in measured for h in m.won_copy_hosts)
            # the replay's copies quicker than the real ones: it predicts too much of a copy's gain
            too_much = pool < won_ms
            fits = (miss < 0) == too_much
            line += (f" {won} of {made} copies won (their originals were killed), {on_fast} of them on the fast "
                     f"host; a winning copy ran {won_ms:.0f} ms on average, while the replay draws a copy's duration "
                     f"from the stage's finished tasks on both hosts, {pool:.0f} ms on average in the off runs, so "
                     f"the replay predicts too {'much' if too_much else 'little'} of a copy's gain"
                     + ((": that fits the miss." if fits else ": that cannot explain the miss, which runs the "
                         "other way.") if miss else "."))
        elif made:
            line += f" None of the {made} copies won: each was killed when its original ended first."
        late = [x for r in runs for x in copy_lateness(Path(r.log), p.rule, w.tasks)]
        if late:
            line += (f" Spark launched each copy when its original had run {min(late):.2f} to {max(late):.2f} times "
                     f"the rule's threshold (median {statistics.median(late):.2f}): past 1 by the timer's interval "
                     f"and the scheduler's delay, which the replay checks on its own phase"
                     + (", and further where the copy waited for the quantile of successes or a free core of the "
                        "other host, which the replay finds on the off runs' timeline, not the run's own."
                        if max(late) > 1.1 else "."))
        if setting == DEFAULTS:
            line += (" This setting ran with Spark's efficiency check on (its default), which the replay leaves out: "
                     "Spark copies a task it judges to progress efficiently only past longRunTaskFactor (2) x the "
                     "threshold"
                     + (f"; copies here came as early as {min(late):.2f} x the threshold, under the check's 2 x, so "
                        "it did not hold every copy back (the workload's tasks read no input records, which likely "
                        "leaves it no progress rate to go by)." if late and min(late) < 2 else "."))
        out.append(line)
    return "\n\n".join(out)


def checkout() -> str:
    """git's short HEAD, and whether the tree differs from it."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    return commit + (" with uncommitted changes" if dirty else "")


def page(exp: Experiment) -> str:
    seconds = {s: Spread.of([r.seconds for r in exp.runs if r.setting == s]) for s in SETTINGS
               if any(r.setting == s for r in exp.runs)}
    seen = sorted({f"{h}: {v}" for r in exp.runs for h, vs in r.slowdown_by_host.items() for v in vs})
    return f"""# Spark speculation on a real cluster: the advice's predictions against measured runs

This page holds the speculation advice (`nurd-spark advise`, docs/EVALUATION.md) to a real Spark
standalone cluster on this machine. A workload with one slow host and a few skewed partitions runs
with speculation off, a few times, every run's event log in one directory as an operator's
`spark.eventLog.dir` holds a job's history; the advice reads that directory and predicts, for the
setting it recommends and for Spark 4's defaults, how much stage time speculation would cut and how
much executor time the copies would cost; then both settings run as many times, and each run's event
log says what they did. The recommended setting runs with exactly the keys the advice writes, plus
`spark.speculation.efficiency.enabled=false`, since the replay models Spark's rule without its
efficiency check; Spark 4's defaults run as Spark 4 runs them (`spark.speculation=true` only, the
efficiency check on). Every number below is written by `studies/spark/cluster_experiment.py`, which
also says where a prediction missed.

How the numbers are made:

- stage time: a workload stage's submission to its completion (the warm-up stage, one short task a slot,
  is not counted);
- measured cut: 100 x (the off runs' mean stage times, summed over the stages matched by order, minus the
  run's) / that sum, so the off runs' own cuts average 0 and their spread is the run-to-run noise;
- extra executor time: 100 x the speculative attempts' run time (finish minus launch) / the other attempts';
- predicted: the advice's rows at a budget of {BUDGET_PCT:g}% extra executor time, each a mean over the
  stages it scores (a stage's cut and extra time as shares of that stage's own), with the cut's 95%
  interval; for the recommended setting, its row "following this answer".

<!-- measured: {COMMAND} --out DIR --doc docs/SPARK_EXPERIMENT.md -->
- command: `{exp.command}`, at commit {exp.commit}, finished {exp.finished}
- machine: Spark {_spark_version()}, {os.cpu_count()} cores; load average (1, 5, 15 min) \
{" / ".join(f"{x:.2f}" for x in exp.load_start)} at the start, {" / ".join(f"{x:.2f}" for x in exp.load_end)} at the end
- {len(exp.runs)} applications, {exp.runs_per_setting} a setting, everything (cluster start to stop) in \
{exp.seconds / 60:.1f} min; an application's driver ran, in seconds: \
{"; ".join(f"{s} {v.text()}" for s, v in seconds.items())}
- the workload: {exp.workload.text()}; the tasks read the slowdown {", ".join(seen)} (host: value)

The advice on the off runs, in its words:

```
{chr(10).join(line.rstrip() for line in exp.prediction.advice)}
```

{table(exp)}

{reading(exp)}
<!-- end of measured -->
"""


def _spark_version() -> str:
    import pyspark

    return pyspark.__version__


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
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
