"""The speculation experiment's page (docs/SPARK_EXPERIMENT.md, written whole by
studies/spark/cluster_experiment.py): the predicted and measured table, and paragraphs saying where
a prediction missed and the likely reasons, from the numbers."""

from __future__ import annotations

import math
import os
import statistics
from pathlib import Path

from studies.spark.experiment_measurement import (
    Experiment, Measured, Spread, copy_lateness, cut_pct, mean_stage_ms, num,
)
from studies.spark.experiment_prediction import BUDGET_PCT, Predicted
from studies.spark.experiment_workload import DEFAULTS, OFF, RECOMMENDED, SETTINGS, Workload

#: The command that runs the experiment and writes the page.
COMMAND = "python -m studies.spark.cluster_experiment"


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
        rows.append(f"| {setting} | {rule} | {num(p.cut_pct)} [{num(p.cut_lo)}, {num(p.cut_hi)}] | {cut.text()} "
                    f"| {within(p, cut.mean) if p.rule else 'the reference'} | {num(p.extra_pct)} "
                    f"| {Spread.of([m.extra_pct for m in measured]).text()} | {num(p.copies, 2)} "
                    f"| {num(copies.mean, 2)} ({num(copies.lo, 2)} to {num(copies.hi, 2)}) |")
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
                    f"[{num(p.cut_lo)}, {num(p.cut_hi)}]")
        # > 0: the miss is a cut above the interval (the prediction too low); < 0: below it
        miss = cut.mean - p.cut_hi if verdict == "no (above)" else cut.mean - p.cut_lo if verdict == "no (below)" else 0
        line = (f"{setting}: the measured cut, {cut.mean:.1f}%, is {position}; {copies:.2f} copies a stage "
                f"against {num(p.copies, 2)} predicted, extra executor time {extra.mean:.1f}% against "
                f"{num(p.extra_pct)}%.")
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
