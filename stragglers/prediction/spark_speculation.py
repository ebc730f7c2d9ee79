"""Spark's speculation rule replayed on staged event logs, and the operator's answer from it.

The rule is TaskSetManager.checkSpeculatableTasks of Spark 3.x/4.0 (apache/spark,
core/src/main/scala/org/apache/spark/scheduler/TaskSetManager.scala), on one stage attempt (a
TaskSet), on the wall clock from its submission:

- it is checked every ``spark.speculation.interval`` (TaskSchedulerImpl's fixed-delay timer);
- only once at least ``max(floor(quantile * numTasks), 1)`` tasks have succeeded
  (``minFinishedForSpeculation`` against ``successfulTaskDurations.size``); never in a TaskSet of
  one task (no ``spark.speculation.task.duration.threshold`` here);
- ``threshold = max(multiplier * median(successful durations), minTaskRuntime)`` (the median is
  MedianHeap's: the mean of the two middle values for an even count);
- a running attempt of a task that has not succeeded and runs alone (``copiesRunning == 1``) is
  speculatable when ``timeRunning > threshold``; a task is marked once (``speculatableTasks``).

The timer's phase is not in the log: the replay checks at submission + k * interval, so a flag is
within one interval of Spark's. Spark's efficiency check (``spark.speculation.efficiency.*``, on by
default since 3.4) also needs a running task's records read and run time, which executors send in
heartbeats and event logs do not keep. The replay is the rule with the check off. With it on, Spark
copies a subset of these flags (a task over the threshold whose progress rate is efficient is only
copied past ``longRunTaskFactor * threshold``): ``long_run_factor`` replays that lower bound.

The operator's replay (``replay_policy``) adds what a copy needs on Spark's terms: a free slot of
the application's executors (their cores, minus the attempts the log shows running there and the
copies already placed), after the stage's pending tasks (none launched later in the log), never on
the original's host; its duration is drawn from the stage's successful durations with a fixed seed;
a copy of an attempt that failed or was killed buys nothing (its time is counted, its end is not).
A replayed copy's success does not enter the median of later checks (the log's successes do): the
copies are few and mostly end the stage. No decision looks ahead: a flag reads the successes by
then, a copy the cores the log shows busy then and whether a task of the stage is still to launch.
"""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

import duckdb
import numpy as np

from stragglers.warehouse.sql_files import render

#: The tables the replay reads (sql/<name>.sql), built from the staged stg_spark_* tables.
REPLAY_TABLES = ("spark_replay_attempts", "spark_replay_slots")


@dataclass(frozen=True)
class SpeculationRule:
    """Spark's speculation settings (times in ms)."""
    name: str
    quantile: float
    multiplier: float
    min_task_runtime_ms: float
    interval_ms: float = 100.0

    def conf(self) -> str:
        """The settings as a spark-defaults.conf block."""
        return "\n".join([
            "spark.speculation                   true",
            f"spark.speculation.quantile          {self.quantile:g}",
            f"spark.speculation.multiplier        {self.multiplier:g}",
            f"spark.speculation.minTaskRuntime    {_duration(self.min_task_runtime_ms)}",
            f"spark.speculation.interval          {_duration(self.interval_ms)}",
        ])


def _duration(ms: float) -> str:
    return f"{ms / 1000:g}s" if ms >= 1000 and ms % 1000 == 0 else f"{ms:g}ms"


#: Spark 4.0's defaults, as the ConfigEntry objects of Spark 4.0.5's jars report them
#: (org.apache.spark.internal.config.package: SPECULATION_QUANTILE 0.9, SPECULATION_MULTIPLIER 3.0,
#: SPECULATION_MIN_THRESHOLD 100ms, SPECULATION_INTERVAL 100ms; efficiency.enabled true,
#: longRunTaskFactor 2.0, processRateMultiplier 0.75).
SPARK_4_DEFAULTS = SpeculationRule("spark-4.0-defaults", 0.9, 3.0, 100.0)
#: Spark 3.x's defaults (quantile 0.75, multiplier 1.5; minTaskRuntime and interval 100ms).
SPARK_3_DEFAULTS = SpeculationRule("spark-3-defaults", 0.75, 1.5, 100.0)
NAMED_RULES = (SPARK_4_DEFAULTS, SPARK_3_DEFAULTS)

_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0, "min": 60000.0, "h": 3600000.0, "d": 86400000.0}


def _time_ms(value: str, key: str) -> float:
    """A Spark time setting in ms (a bare number is ms, as Spark reads these keys)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([a-z]*)\s*", str(value).lower())
    if not m or (m.group(2) and m.group(2) not in _UNITS_MS):
        raise ValueError(f"{key}={value!r}: not a Spark time (a number with us, ms, s, m, min, h or d)")
    return float(m.group(1)) * _UNITS_MS[m.group(2) or "ms"]


def rule_from_conf(conf: dict[str, str], name: str = "application", default: "SpeculationRule | None" = None
                   ) -> "SpeculationRule":
    """The rule an application ran with, from its Spark properties; a key it does not set takes
    ``default``'s value (Spark 4.0's defaults)."""
    d = default or SPARK_4_DEFAULTS
    return SpeculationRule(
        name, float(conf.get("spark.speculation.quantile", d.quantile)),
        float(conf.get("spark.speculation.multiplier", d.multiplier)),
        _time_ms(conf["spark.speculation.minTaskRuntime"], "spark.speculation.minTaskRuntime")
        if "spark.speculation.minTaskRuntime" in conf else d.min_task_runtime_ms,
        _time_ms(conf["spark.speculation.interval"], "spark.speculation.interval")
        if "spark.speculation.interval" in conf else d.interval_ms)


#: The settings the tuning tries (each with Spark's default interval).
QUANTILES = (0.5, 0.75, 0.9)
MULTIPLIERS = (1.25, 1.5, 2.0, 3.0, 4.0)
MIN_TASK_RUNTIMES_MS = (100.0, 1000.0, 5000.0, 30000.0)


@dataclass
class StageAttempt:
    """One stage attempt's task attempts (times in ms from its submission)."""
    app_id: str
    log_id: int
    stage_id: int
    stage_attempt: int
    tasks: int
    submitted_ms: float
    stage_ms: float
    median_success_ms: float
    index: np.ndarray
    speculative: np.ndarray
    outcome: np.ndarray
    executor: np.ndarray
    host: np.ndarray
    launch: np.ndarray
    finish: np.ndarray       # NaN: running when the log ends
    _flags: dict = field(default_factory=dict, repr=False)

    @property
    def key(self) -> tuple:
        return (self.app_id, self.stage_id, self.stage_attempt)


def load_stages(con: duckdb.DuckDBPyConnection) -> list[StageAttempt]:
    """The selected stage attempts of the staged logs, in submission order."""
    con.execute(render("spark_replay_attempts"))
    df = con.execute("SELECT * FROM spark_replay_attempts").df()
    stages = []
    for (log_id, stage_id, stage_attempt), g in df.groupby(["log_id", "stage_id", "stage_attempt"], sort=False):
        first = g.iloc[0]
        stages.append(StageAttempt(
            str(first.app_id), int(log_id), int(stage_id), int(stage_attempt), int(first.tasks),
            float(first.submitted_us) / 1000.0, float(first.stage_ms),
            float(first.median_success_ms) if first.median_success_ms == first.median_success_ms else math.nan,
            g.task_index.to_numpy(np.int64), g.speculative.to_numpy(bool), g.outcome.to_numpy(str),
            g.executor_id.to_numpy(str), g.host.to_numpy(str),
            g.launch_ms.to_numpy(float), g.finish_ms.to_numpy(float, na_value=np.nan)))
    stages.sort(key=lambda s: (s.submitted_ms, s.log_id, s.stage_id, s.stage_attempt))
    return stages


def spark_rule_flags(stage: StageAttempt, rule: SpeculationRule,
                     long_run_factor: float | None = None) -> dict[int, tuple[float, int]]:
    """The tasks Spark's rule marks speculatable: task index -> (check time in ms from submission,
    the position in ``stage``'s arrays of the attempt it copies). The successful durations are every
    attempt's, copies included (Spark's MedianHeap holds each success); a task runs alone when no
    other attempt of it that is not a copy runs, since the replay decides the copies itself."""
    memo = (rule.quantile, rule.multiplier, rule.min_task_runtime_ms, rule.interval_ms, long_run_factor)
    if memo in stage._flags:
        return stage._flags[memo]
    flags: dict[int, tuple[float, int]] = {}
    stage._flags[memo] = flags
    if stage.tasks <= 1:
        return flags
    ok = (stage.outcome == "success") & ~np.isnan(stage.finish)
    order = np.argsort(stage.finish[ok], kind="stable")
    succ_finish = stage.finish[ok][order]
    succ_dur = (stage.finish[ok] - stage.launch[ok])[order]
    min_finished = max(math.floor(rule.quantile * stage.tasks), 1)
    if len(succ_finish) < min_finished:
        return flags
    done = {}   # task index -> the first success of any of its attempts
    for i, f in zip(stage.index[ok], stage.finish[ok]):
        done[int(i)] = min(done.get(int(i), math.inf), float(f))
    # thresholds from the min_finished-th success on: constant between consecutive successes
    starts = succ_finish[min_finished - 1:]
    ends = np.append(succ_finish[min_finished:], math.inf)
    factor = long_run_factor or 1.0
    thresholds = np.array([max(rule.multiplier * float(np.median(succ_dur[:m])), rule.min_task_runtime_ms)
                           for m in range(min_finished, len(succ_dur) + 1)]) * factor
    iv = rule.interval_ms
    lowest = thresholds.min()
    end_of = np.where(np.isnan(stage.finish), math.inf, stage.finish)
    # an attempt that never ran longer than the lowest threshold is never flagged
    candidates = np.flatnonzero(~stage.speculative & (end_of - stage.launch > lowest) & (end_of > starts[0]))
    for a in candidates[np.argsort(stage.launch[candidates], kind="stable")]:
        index, launch = int(stage.index[a]), float(stage.launch[a])
        until = min(float(end_of[a]), done.get(index, math.inf))
        for t0, t1, thr in zip(starts, ends, thresholds):
            if t0 >= until:
                break
            # first check at or after the success that set thr, with a runtime strictly over it
            k = max(math.ceil(t0 / iv), math.floor((launch + thr) / iv) + 1)
            t = k * iv
            if t < min(t1, until):
                if index not in flags or t < flags[index][0]:
                    flags[index] = (t, int(a))
                break
    return flags


# ---------------------------------------------------------------------------------------------------
# The operator's replay: copies placed on the application's slots

@dataclass
class Slots:
    """An application's executors: host, cores, life, and the attempts that held their cores."""
    host: dict[str, str]
    cores: dict[str, int]
    added: dict[str, float]
    removed: dict[str, float]
    launches: dict[str, np.ndarray]   # sorted
    finishes: dict[str, np.ndarray]   # sorted
    copies: dict[str, list[tuple[float, float]]] = field(default_factory=dict)

    def free_at(self, executor: str, t: float) -> int:
        busy = (np.searchsorted(self.launches[executor], t, side="right")
                - np.searchsorted(self.finishes[executor], t, side="right"))
        busy += sum(1 for s, e in self.copies.get(executor, ()) if s <= t < e)
        alive = self.added[executor] <= t < self.removed[executor]
        return int(self.cores[executor] - busy) if alive else 0

    def change_times(self, executors: list[str], after: float, before: float) -> np.ndarray:
        """When a core of ``executors`` may come free in (after, before): an attempt's or copy's end,
        an executor's arrival."""
        parts = [np.array([after])]
        for e in executors:
            f = self.finishes[e]
            parts.append(f[(f > after) & (f < before)])
            parts.append(np.array([c[1] for c in self.copies.get(e, ()) if after < c[1] < before]))
            if after < self.added[e] < before:
                parts.append(np.array([self.added[e]]))
        return np.unique(np.concatenate(parts))


def load_slots(con: duckdb.DuckDBPyConnection) -> dict[int, Slots]:
    """Each log's executors and the attempts that held their cores (absolute ms)."""
    con.execute(render("spark_replay_slots"))
    df = con.execute("SELECT * FROM spark_replay_slots").df()
    out: dict[int, Slots] = {}
    for log_id, g in df.groupby("log_id"):
        s = Slots({}, {}, {}, {}, {}, {})
        for ex, h in g.groupby("executor_id"):
            first = h.iloc[0]
            s.host[ex], s.cores[ex] = str(first.host), int(first.cores)
            s.added[ex] = float(first.added_ms)
            s.removed[ex] = float(first.removed_ms) if first.removed_ms == first.removed_ms else math.inf
            held = h.dropna(subset=["launch_ms"])
            s.launches[ex] = np.sort(held.launch_ms.to_numpy(float))
            s.finishes[ex] = np.sort(held.finish_ms.to_numpy(float))
        out[int(log_id)] = s
    return out


@dataclass(frozen=True)
class StageOutcome:
    key: tuple
    stage_ms: float
    cut_ms: float          # the stage's time cut by the copies
    busy_ms: float         # the stage's executor time (every attempt's run time)
    extra_ms: float        # the copies' executor time
    copies: int
    flagged: int


def _copy_seed(seed: int, stage: StageAttempt, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(stage.app_id.encode()), stage.stage_id, stage.stage_attempt,
                                  index])


def replay_policy(stages: list[StageAttempt], slots: dict[int, Slots], rule: SpeculationRule,
                  seed: int = 0, long_run_factor: float | None = None) -> list[StageOutcome]:
    """Each stage attempt replayed under ``rule``: Spark's flags, then each copy placed on a free
    slot of another host once the stage has no pending task, in flag order across an application's
    stages (copies compete for its slots)."""
    by_log: dict[int, list[tuple[float, StageAttempt, int, int]]] = {}
    for st in stages:
        for index, (t, a) in spark_rule_flags(st, rule, long_run_factor).items():
            by_log.setdefault(st.log_id, []).append((st.submitted_ms + t, st, index, a))
    results: dict[tuple, dict] = {st.key: {"cut": 0.0, "extra": 0.0, "copies": 0, "flagged": 0, "done": {}}
                                  for st in stages}
    for log_id, flags in by_log.items():
        app_slots = slots.get(log_id)
        for s in (app_slots.copies.values() if app_slots else ()):
            s.clear()
        for t_abs, st, index, a in sorted(flags, key=lambda f: f[0]):
            r = results[st.key]
            r["flagged"] += 1
            if app_slots is None:
                continue
            placed = place_copy(st, a, t_abs, app_slots)
            if placed is None:
                continue
            executor, start = placed
            durations = st.finish[(st.outcome == "success") & ~st.speculative] - \
                st.launch[(st.outcome == "success") & ~st.speculative]
            if not len(durations):
                continue
            d = float(_copy_seed(seed, st, index).choice(durations))
            orig_end = st.submitted_ms + float(st.finish[a]) if not np.isnan(st.finish[a]) else math.inf
            copy_end = min(start + d, orig_end)
            app_slots.copies.setdefault(executor, []).append((start, copy_end))
            r["copies"] += 1
            r["extra"] += copy_end - start
            if st.outcome[a] == "success" and start + d < orig_end:
                r["done"][index] = start + d - st.submitted_ms
    out = []
    for st in stages:
        r = results[st.key]
        ok = (st.outcome == "success") & ~np.isnan(st.finish)
        done: dict[int, float] = {}
        for i, f in zip(st.index[ok], st.finish[ok]):
            done[int(i)] = min(done.get(int(i), math.inf), float(f))
        last = max(done.values()) if done else 0.0
        new_last = max((min(f, r["done"].get(i, math.inf)) for i, f in done.items()), default=0.0)
        busy = float(np.nansum(st.finish - st.launch))
        out.append(StageOutcome(st.key, st.stage_ms, max(last - new_last, 0.0), busy, r["extra"],
                                r["copies"], r["flagged"]))
    return out


def place_copy(st: StageAttempt, a: int, t_abs: float, slots: Slots) -> tuple[str, float] | None:
    """Where and when the copy of attempt ``a`` flagged at ``t_abs`` starts: the first moment from
    then on, after the stage's last launch of an attempt not a copy (pending tasks go first), that
    an executor on another host has a free core, before the original ends; None if never."""
    earliest = max(t_abs, st.submitted_ms + float(np.max(st.launch[~st.speculative])))
    end = st.submitted_ms + float(st.finish[a]) if not np.isnan(st.finish[a]) else math.inf
    others = [e for e, h in slots.host.items() if h != st.host[a]]
    if not others or earliest >= end:
        return None
    for t in slots.change_times(others, earliest, end):
        t = max(float(t), earliest)
        for e in others:
            if slots.free_at(e, t) > 0:
                return e, t
    return None


@dataclass(frozen=True)
class Replayed:
    """One task the rule flags in a stage attempt, and where and when its copy would start (None:
    no slot of another host came free before the original ended). Times in ms from submission."""
    app_id: str
    stage_id: int
    stage_attempt: int
    task_index: int
    flagged_ms: float
    original_host: str
    copy_ms: float | None
    copy_host: str | None


def replay_flags(stages: list[StageAttempt], slots: dict[int, Slots], rules: dict[str, SpeculationRule]
                 ) -> list[Replayed]:
    """Every task ``rules[app_id]`` flags in ``stages``, each with its copy placed alone on the slots
    the log shows (no other replayed copy competes): what Spark itself would have done, to hold
    the replay to the copies a Spark run made."""
    out = []
    for st in stages:
        for index, (t, a) in sorted(spark_rule_flags(st, rules[st.app_id]).items()):
            placed = place_copy(st, a, st.submitted_ms + t, slots[st.log_id]) if st.log_id in slots else None
            out.append(Replayed(st.app_id, st.stage_id, st.stage_attempt, index, t, str(st.host[a]),
                                placed and placed[1] - st.submitted_ms, placed and slots[st.log_id].host[placed[0]]))
    return out


def scheduling_delay_ms(stages: list[StageAttempt]) -> float:
    """The longest gap, either way, on one executor, between an attempt's recorded end and the next
    attempt of the same stage attempt launched there while the stage still had tasks to launch: how
    far apart Spark's clock puts a freed core and its next task (the driver stamps a task's end when
    it handles the result, which can come after the core has its next task: the gap is then
    negative). Meaningful for one-core executors, the cluster's."""
    worst = 0.0
    for st in stages:
        last_launch = float(np.max(st.launch[~st.speculative]))
        for ex in set(st.executor):
            on = np.flatnonzero((st.executor == ex) & ~st.speculative & ~np.isnan(st.finish))
            on = on[np.argsort(st.launch[on], kind="stable")]
            for prev, nxt in zip(on[:-1], on[1:]):
                if st.launch[nxt] <= last_launch:
                    worst = max(worst, abs(float(st.launch[nxt] - st.finish[prev])))
    return worst


# ---------------------------------------------------------------------------------------------------
# The answer: settings chosen on the earlier stages, scored on the later ones

@dataclass(frozen=True)
class Score:
    stages: int
    cut_pct: float
    extra_pct: float
    copies: int


def score(outcomes: list[StageOutcome]) -> Score:
    stage = sum(o.stage_ms for o in outcomes)
    busy = sum(o.busy_ms for o in outcomes)
    return Score(len(outcomes), 100 * sum(o.cut_ms for o in outcomes) / stage if stage else 0.0,
                 100 * sum(o.extra_ms for o in outcomes) / busy if busy else 0.0, sum(o.copies for o in outcomes))


def bootstrap_cut(outcomes: list[StageOutcome], n: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the stage-time cut (a ratio of sums), resampling stages."""
    if not outcomes:
        return (math.nan, math.nan)
    cut = np.array([o.cut_ms for o in outcomes])
    stage = np.array([o.stage_ms for o in outcomes])
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(outcomes), size=(n, len(outcomes)))
    ratios = 100 * cut[draws].sum(axis=1) / np.maximum(stage[draws].sum(axis=1), 1e-9)
    return float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))


def candidate_rules(interval_ms: float = 100.0) -> list[SpeculationRule]:
    return [SpeculationRule(f"q{q:g}-m{m:g}-r{_duration(r)}", q, m, r, interval_ms)
            for q, m, r in product(QUANTILES, MULTIPLIERS, MIN_TASK_RUNTIMES_MS)]


#: The extra executor time (percent of the stages' own) the answer is given at, and the files it is
#: written to in the report directory.
BUDGET_PCT = 5.0
ANSWER_FILE, CONF_FILE = "spark_speculation.md", "spark-defaults.conf"
#: Their directory under the data directory: beside reports/, which the report replaces whole.
ANSWER_DIR = "spark"
#: A stage whose median successful task runs under this (Spark's default minTaskRuntime) is too
#: short for speculation to matter: counted and set aside, the same stages for every setting.
SHORT_STAGE_MS = 100.0


def split_short(stages: list[StageAttempt], slots: dict[int, Slots], short_ms: float = SHORT_STAGE_MS
                ) -> tuple[list[StageAttempt], list[StageAttempt], list[StageAttempt]]:
    """(stages replayed, stages too short: median successful task under ``short_ms`` or no success,
    stages of an application with executors on one host only (a local-mode one among them): Spark
    never runs a copy on its original's host, so speculation cannot act there)."""
    short = [s for s in stages if not s.median_success_ms >= short_ms]
    one_host = [s for s in stages if s.median_success_ms >= short_ms
                and len(set(slots[s.log_id].host.values()) if s.log_id in slots else ()) < 2]
    aside = {id(s) for s in short + one_host}
    return [s for s in stages if id(s) not in aside], short, one_host


@dataclass
class Answer:
    """The operator's answer: counts, the chosen setting and its scores (percent of stage time cut,
    percent extra executor time) on the later stages, beside Spark 4.0's defaults on the same ones."""
    stages: int              # stage attempts replayed (selected ones with task attempts)
    applications: int
    set_aside: int           # too short: median successful task under short_ms
    one_host: int            # of an application with one host: no copy can run
    short_ms: float
    budget_pct: float
    earlier: int
    later: int
    chosen: SpeculationRule | None
    chosen_later: Score | None
    chosen_ci: tuple[float, float]
    defaults_later: Score | None
    defaults_rule: SpeculationRule = SPARK_4_DEFAULTS
    tuning: list[tuple[SpeculationRule, Score]] = field(default_factory=list)

    def text(self) -> str:
        head = f"On your {self.stages} stages ({self.applications} applications): "
        aside = (f"{self.set_aside} stages whose median task runs under {_duration(self.short_ms)} are too short for "
                 f"speculation to matter and are set aside, and {self.one_host} of applications on a single host "
                 f"(where Spark never runs a copy); the {self.earlier + self.later} others are split by "
                 f"submission, the {self.earlier} earlier ones choose and the {self.later} later ones are scored.")
        if self.chosen is None:
            d = self.defaults_later
            defaults = (f"Spark's defaults ({self.defaults_rule.name}) give {d.cut_pct:.2f}% at {d.extra_pct:.2f}% "
                        f"extra executor time ({d.copies} copies) on the later stages. " if d else "")
            return (head + f"no setting of speculation makes a copy within {self.budget_pct:g}% extra executor time "
                    f"on the earlier stages, so there is nothing to set. " + defaults + aside)
        c, d, (lo, hi) = self.chosen_later, self.defaults_later, self.chosen_ci
        return (head + f"at {self.budget_pct:g}% extra executor time, set quantile {self.chosen.quantile:g}, "
                f"multiplier {self.chosen.multiplier:g}, minTaskRuntime {_duration(self.chosen.min_task_runtime_ms)} "
                f"(chosen on the earlier stages); it would have cut stage time by {c.cut_pct:.2f}% "
                f"[{lo:.2f}, {hi:.2f}] at {c.extra_pct:.2f}% extra executor time ({c.copies} copies); "
                f"Spark's defaults ({self.defaults_rule.name}) give {d.cut_pct:.2f}% at {d.extra_pct:.2f}% "
                f"({d.copies} copies). " + aside)

    def conf(self) -> str:
        """The spark-defaults.conf block to copy; with nothing chosen, a comment saying so and
        speculation left off (Spark's default)."""
        if self.chosen is None:
            return ("# no speculation setting makes a copy within the budget on these logs: leave it off\n"
                    "spark.speculation                   false\n")
        return ("# chosen by replaying your event logs (stragglers/prediction/spark_speculation.py)\n"
                + self.chosen.conf() + "\n")


def answer(stages: list[StageAttempt], slots: dict[int, Slots], budget_pct: float = BUDGET_PCT, seed: int = 0,
           rules: list[SpeculationRule] | None = None, short_ms: float = SHORT_STAGE_MS) -> Answer:
    """The setting with the largest stage-time cut within ``budget_pct`` extra executor time on the
    earlier half (by submission) of the stages long enough to matter, scored on the later half with
    its bootstrap interval, beside Spark 4.0's defaults on the same later stages. A setting that
    makes no copy is never chosen."""
    long, short, one_host = split_short(stages, slots, short_ms)
    long.sort(key=lambda s: (s.submitted_ms, s.log_id, s.stage_id, s.stage_attempt))
    half = len(long) // 2
    earlier, later = long[:half], long[half:]
    tuning = [(rule, score(replay_policy(earlier, slots, rule, seed))) for rule in rules or candidate_rules()] \
        if earlier else []
    within = [(r, s) for r, s in tuning if s.extra_pct <= budget_pct and s.copies > 0]
    chosen = max(within, key=lambda rs: (rs[1].cut_pct, -rs[1].extra_pct))[0] if within else None
    counts = dict(stages=len(stages), applications=len({s.app_id for s in stages}), set_aside=len(short),
                  one_host=len(one_host),
                  short_ms=short_ms, budget_pct=budget_pct, earlier=len(earlier), later=len(later))
    defaults_later = score(replay_policy(later, slots, SPARK_4_DEFAULTS, seed)) if later else None
    if chosen is None:
        return Answer(**counts, chosen=None, chosen_later=None, chosen_ci=(math.nan, math.nan),
                      defaults_later=defaults_later, tuning=tuning)
    chosen_out = replay_policy(later, slots, chosen, seed)
    return Answer(**counts, chosen=chosen, chosen_later=score(chosen_out),
                  chosen_ci=bootstrap_cut(chosen_out, seed=seed), defaults_later=defaults_later, tuning=tuning)


def write_answer(ans: Answer, reports_dir: Path) -> tuple[Path, Path]:
    """The answer as the report's Markdown (the answer first, the block to copy, every setting tried
    on the earlier stages) and the spark-defaults.conf file; returns their paths. With nothing
    chosen, the conf file says so in a comment and leaves speculation off."""
    reports_dir = Path(reports_dir)
    reports_dir.mkdir(parents=True, exist_ok=True)
    conf = ans.conf()
    rows = "\n".join(f"| {r.name} | {s.cut_pct:.3f} | {s.extra_pct:.3f} | {s.copies} |" for r, s in ans.tuning)
    md = (f"# Spark speculation: the settings to set\n\n{ans.text()}\n\n```\n{conf}```\n\n"
          f"Every setting tried on the {ans.earlier} earlier stages (budget {ans.budget_pct:g}% extra executor "
          f"time; a setting that makes no copy is never chosen):\n\n"
          f"| setting | stage time cut % | extra executor time % | copies |\n| --- | --- | --- | --- |\n{rows}\n")
    (reports_dir / ANSWER_FILE).write_text(md)
    (reports_dir / CONF_FILE).write_text(conf)
    return reports_dir / ANSWER_FILE, reports_dir / CONF_FILE


def answer_row(ans: Answer, trace: str) -> dict:
    """The answer as table spark_answer's row (sql/spark_answer.sql): what the report opens with."""
    c, d, (lo, hi) = ans.chosen_later, ans.defaults_later, ans.chosen_ci
    return {"trace": trace, "answer": ans.text(), "conf": ans.conf(), "stages": ans.stages,
            "applications": ans.applications, "set_aside_short": ans.set_aside, "set_aside_one_host": ans.one_host,
            "earlier": ans.earlier, "later": ans.later, "budget_pct": ans.budget_pct,
            "chosen": ans.chosen.name if ans.chosen else None, "chosen_cut_pct": c.cut_pct if c else None,
            "chosen_cut_lo": lo if c else None, "chosen_cut_hi": hi if c else None,
            "chosen_extra_pct": c.extra_pct if c else None, "defaults_rule": ans.defaults_rule.name,
            "defaults_cut_pct": d.cut_pct if d else None, "defaults_extra_pct": d.extra_pct if d else None}
