"""The straggler-cause model shared by the Google and Alibaba generators.

Every number here is either taken from a paper in /work/shared/seeds (the
constant's comment names seed file and table/section) or marked INVENTED with
the reason. docs/SYNTHETIC_TRACE.md describes the model in prose.

The model is deliberately independent of any prediction method: it says how a
cause changes a task's resource usage and its latency, nothing about how a
predictor should see it.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field

import numpy as np

# ---------------------------------------------------------------------------
# Causes (Hound, seed 003, Table 4 topics and Table 7 coverage).
# ---------------------------------------------------------------------------
DATA_SKEW = "data_skew"
COMPUTATION_SKEW = "computation_skew"
IO_SKEW = "io_skew"
LIMITED_PROCESSOR = "limited_processor"
LIMITED_MEMORY = "limited_memory"
LIMITED_IO = "limited_io"
CACHE_MISSES = "cache_misses"
QUEUEING_DELAY = "queueing_delay"
EVICTION = "eviction"

CAUSES: tuple[str, ...] = (
    DATA_SKEW, LIMITED_PROCESSOR, CACHE_MISSES, LIMITED_IO, QUEUEING_DELAY,
    LIMITED_MEMORY, COMPUTATION_SKEW, EVICTION, IO_SKEW,
)

# Hound (seed 003) Table 7: coverage = fraction of jobs where the cause explains
# some stragglers; dominant coverage = fraction where it explains the majority.
HOUND_COVERAGE: dict[str, float] = {
    DATA_SKEW: 0.736,
    LIMITED_PROCESSOR: 0.392,
    CACHE_MISSES: 0.326,
    LIMITED_IO: 0.367,
    QUEUEING_DELAY: 0.200,
    LIMITED_MEMORY: 0.136,
    COMPUTATION_SKEW: 0.312,
    EVICTION: 0.038,
    IO_SKEW: 0.056,
}
HOUND_DOMINANT_COVERAGE: dict[str, float] = {
    DATA_SKEW: 0.550,
    LIMITED_PROCESSOR: 0.121,
    CACHE_MISSES: 0.070,
    LIMITED_IO: 0.066,
    QUEUEING_DELAY: 0.051,
    LIMITED_MEMORY: 0.027,
    COMPUTATION_SKEW: 0.022,
    EVICTION: 0.009,
    IO_SKEW: 0.006,
}
# Hound (seed 003) Table 6: number of causes per job, 1..5.
HOUND_N_CAUSES_P: tuple[float, ...] = (0.12, 0.33, 0.36, 0.16, 0.03)

# INVENTED: fraction of a job's tasks hit by one of its causes. Hound gives
# the mix of causes among stragglers, not how many tasks a cause touches. Set
# so that the affected tasks are of the order of the p90 straggler set (10%).
AFFECTED_FRACTION_RANGE = (0.06, 0.15)
# INVENTED: severity s of an affected task; its latency is multiplied by
# (1 + s). Lognormal with median 0.6 -> median slowdown 1.6x, upper tail
# beyond 2.5x, the order of the slowest/average ratio of 2.5 that Ouyang et
# al. (seed 004, Section II (Related Work), Figure 1) show for Google jobs.
SEVERITY_MEDIAN = 0.6
SEVERITY_SIGMA = 0.5
# INVENTED: unexplained per-task noise (lognormal sigma, per job uniform).
NOISE_SIGMA_RANGE = (0.12, 0.30)
# INVENTED: static per-task heterogeneity of resource usage that is unrelated
# to latency, and per-window measurement noise.
TASK_USAGE_SIGMA = 0.15
WINDOW_USAGE_SIGMA = 0.08

# ---------------------------------------------------------------------------
# Machines (Ouyang et al., seed 004).
# ---------------------------------------------------------------------------
# Table 2: Google server types: (CPU capacity, memory capacity, proportion).
OUYANG_SERVER_TYPES: tuple[tuple[float, float, float], ...] = (
    (0.5, 0.4995, 0.5350),
    (0.5, 0.2493, 0.3070),
    (0.5, 0.7490, 0.0796),
    (1.0, 1.0000, 0.0632),
)
# Section IV-C, Table 4: 105 of 12583 nodes (0.83%) are level-0 node-level
# stragglers (MapReduce jobs). Section V-A: per-node normalized task durations
# are best fit by a 3-parameter log-logistic distribution.
OUYANG_SLOW_NODE_FRACTION = 105 / 12583
# The paper does not publish the fitted parameters. INVENTED: the machine
# slowdown factor is 1 + X, X ~ log-logistic(scale a, shape b); b = 2.5 and a
# chosen so that P(1 + X > CHRONIC_SLOWDOWN) equals the 0.83% above.
LOGLOGISTIC_SHAPE = 2.5
CHRONIC_SLOWDOWN = 1.5
LOGLOGISTIC_SCALE = (CHRONIC_SLOWDOWN - 1.0) / (
    (1.0 / OUYANG_SLOW_NODE_FRACTION - 1.0) ** (1.0 / LOGLOGISTIC_SHAPE)
)
# the median machine's slowdown (a log-logistic's median is its scale): the "typical" machine of
# the truth's counterfactual (stragglers.diagnosis.truth.cause_added_s)
TYPICAL_SLOWDOWN = 1.0 + LOGLOGISTIC_SCALE

# ---------------------------------------------------------------------------
# Failures and retries (El-Sayed et al., seed 001).
# ---------------------------------------------------------------------------
# Section IV-C: probability a Google task succeeds on its first attempt 98%,
# on the first retry (after one failure) 42%, on the second retry 2%,
# negligible after (Figure 6).
ELSAYED_ATTEMPT_SUCCESS = (0.98, 0.42, 0.02, 0.005)
# Section IV-C: 70-90% of failed tasks re-executed more than once, 15-30% more
# than twice. We take the middle: P(retries = 1) = 0.2, P(= 2) = 0.575,
# P(>= 3) = 0.225 (3..6 uniformly) for the retry budget of a task.
ELSAYED_RETRY_BUDGET_P = (0.20, 0.575, 0.225)
# Section IV-C: only 0.25% of completed Google jobs had a failed task while
# more than 98% of failed jobs had one, so task failures are concentrated in
# few jobs. INVENTED split that keeps the 98% first-attempt success overall:
# a job is failure-prone with probability 0.2 and then each first attempt
# fails with probability 0.1 (0.2 * 0.1 = 2%).
FAILURE_PRONE_JOB_P = 0.2
FAILURE_PRONE_FIRST_FAIL_P = (1.0 - ELSAYED_ATTEMPT_SUCCESS[0]) / FAILURE_PRONE_JOB_P
# INVENTED: a failed attempt ends at a uniform fraction of its run. (El-Sayed
# Section III, Table II, compares whole-job durations only: failed jobs are
# shorter than killed ones; nothing is given per attempt.)
FAIL_AT_FRACTION = (0.05, 0.9)

# INVENTED small rates (no seed gives per-task rates for production jobs).
BACKGROUND_EVICT_P = 0.002     # eviction of a task without the eviction cause
KILL_TASK_P = 0.003            # a task killed by the user / dependency
LOST_TASK_P = 0.001            # a task whose end was lost
NEVER_SCHEDULED_P = 0.002      # killed while still pending
NO_USAGE_P = 0.005             # task with events but no usage rows
JOB_KILL_P = 0.10              # job killed once 99% of its tasks finished


@dataclass
class JobCauses:
    """A job's mixture of straggler causes (names and weights summing to 1)."""

    names: tuple[str, ...]
    weights: tuple[float, ...]

    def label(self) -> str:
        return ";".join(f"{n}:{w:.2f}" for n, w in zip(self.names, self.weights))

    def weight(self, name: str) -> float:
        for n, w in zip(self.names, self.weights):
            if n == name:
                return w
        return 0.0


def draw_job_causes(rng: np.random.Generator, allowed: tuple[str, ...] = CAUSES) -> JobCauses:
    """Number of causes from Hound Table 6; dominant cause drawn with
    probabilities proportional to Table 7 dominant coverage, the others in
    proportion to coverage (without replacement). The dominant cause gets a
    weight above 1/2 (Section 5.1: "when multiple causes are required, one is
    usually dominant"), the rest is split by a flat Dirichlet."""
    allowed = tuple(c for c in CAUSES if c in allowed)
    k = int(rng.choice(len(HOUND_N_CAUSES_P), p=HOUND_N_CAUSES_P)) + 1
    k = min(k, len(allowed))
    dom_p = np.array([HOUND_DOMINANT_COVERAGE[c] for c in allowed])
    first = allowed[int(rng.choice(len(allowed), p=dom_p / dom_p.sum()))]
    names = [first]
    rest = [c for c in allowed if c != first]
    while len(names) < k:
        cov = np.array([HOUND_COVERAGE[c] for c in rest])
        pick = rest[int(rng.choice(len(rest), p=cov / cov.sum()))]
        names.append(pick)
        rest.remove(pick)
    if k == 1:
        weights = [1.0]
    else:
        w0 = float(rng.uniform(0.5, 0.9))
        others = rng.dirichlet(np.ones(k - 1)) * (1.0 - w0)
        weights = [w0] + [float(x) for x in others]
    return JobCauses(tuple(names), tuple(round(w, 6) for w in weights))


def assign_task_causes(rng: np.random.Generator, n: int, causes: JobCauses,
                       severity_median: float = SEVERITY_MEDIAN) -> tuple[list[str], np.ndarray]:
    """Per task: the cause hitting it ('none' for most) and its severity s >= 0."""
    frac = float(rng.uniform(*AFFECTED_FRACTION_RANGE))
    hit = rng.random(n) < frac
    which = rng.choice(len(causes.names), size=n, p=np.asarray(causes.weights) / sum(causes.weights))
    sev = rng.lognormal(np.log(severity_median), SEVERITY_SIGMA, size=n)
    labels = [causes.names[w] if h else "none" for h, w in zip(hit, which)]
    sev = np.where(hit, sev, 0.0)
    return labels, sev


def machine_slowdowns(rng: np.random.Generator, n: int) -> np.ndarray:
    """Per-machine slowdown factor 1 + X, X log-logistic (Ouyang, seed 004)."""
    u = rng.random(n)
    x = LOGLOGISTIC_SCALE * (u / (1.0 - u)) ** (1.0 / LOGLOGISTIC_SHAPE)
    return 1.0 + x


def machine_types(rng: np.random.Generator, n: int) -> np.ndarray:
    p = np.array([t[2] for t in OUYANG_SERVER_TYPES])
    return rng.choice(len(OUYANG_SERVER_TYPES), size=n, p=p / p.sum())


def retry_budget(rng: np.random.Generator) -> int:
    r = int(rng.choice(3, p=ELSAYED_RETRY_BUDGET_P))
    return (1, 2, int(rng.integers(3, 7)))[r]


@dataclass(frozen=True)
class Effect:
    """Multipliers a cause with severity s applies (latency and usage)."""

    latency: float = 1.0
    cpu: float = 1.0
    max_cpu: float = 1.0
    mem: float = 1.0
    page_cache: float = 1.0
    disk_space: float = 1.0
    io: float = 1.0
    max_io: float = 1.0
    cpi: float = 1.0
    mai: float = 1.0
    slow_start: float = 0.0   # fraction of the run spent waiting at start (queueing)
    queue_gap_s: float = 0.0  # extra SUBMIT -> SCHEDULE gap in seconds
    evict: bool = False


def cause_effect(cause: str, s: float, rng: np.random.Generator) -> Effect:
    """How a cause with severity s changes a task (Hound Table 4 topics).

    Directions are Hound's: data skew E0-E2 (memory, page cache, disk space +),
    computation skew E3 (CPU +), I/O skew E4 (I/O +), limited processor E5
    (CPU -), limited memory E6 (memory -), limited I/O E7/E8 (I/O -), cache
    misses E9 (CPI, cache misses +), queueing E10 (scheduling delay +),
    eviction E11 (EVICT +). The exponents (how strongly usage follows the extra
    work) are INVENTED, all below 1 so the latency is never fully explained.
    """
    f = 1.0 + s
    if cause == "none":
        return Effect()
    if cause == DATA_SKEW:      # more input data: more memory, cache, disk, time
        return Effect(latency=f, mem=f ** 0.7, page_cache=f ** 0.9, disk_space=f ** 0.9,
                      io=f ** 0.3)
    if cause == COMPUTATION_SKEW:  # expensive records: CPU-bound longer
        return Effect(latency=f, cpu=f ** 0.6, max_cpu=f ** 0.5)
    if cause == IO_SKEW:
        return Effect(latency=f, io=f ** 0.9, max_io=f ** 0.9)
    if cause == LIMITED_PROCESSOR:  # contended machine: gets less CPU
        return Effect(latency=f, cpu=f ** -0.7, max_cpu=f ** -0.5, cpi=f ** 0.2)
    if cause == LIMITED_MEMORY:     # memory pressure: low memory, thrashing cache
        return Effect(latency=f, mem=f ** -0.6, page_cache=f ** -0.8)
    if cause == LIMITED_IO:
        return Effect(latency=f, io=f ** -0.8, max_io=f ** -0.4)
    if cause == CACHE_MISSES:
        return Effect(latency=f, cpi=f ** 0.8, mai=f ** 0.8)
    if cause == QUEUEING_DELAY:     # waits in the machine's queue at start
        return Effect(latency=1.0, slow_start=s, queue_gap_s=float(rng.uniform(*QUEUEING_GAP_S)))
    if cause == EVICTION:
        return Effect(latency=1.0, evict=True)
    raise ValueError(cause)


# the SUBMIT -> SCHEDULE gap (seconds) the queueing-delay cause adds (Hound E10; INVENTED range)
QUEUEING_GAP_S = (60.0, 900.0)


def background_events(cause: str, evictions: int, failures: int, sched_delay_s: float | None = None) -> str:
    """What lengthened a task's run besides its planted cause: 'eviction' when it was evicted
    without the eviction cause (the background rate), 'failure' when an attempt failed,
    'queueing' when, without the queueing cause, its SUBMIT -> SCHEDULE delay (``sched_delay_s``,
    None when the SUBMIT is before the trace) is at least the shortest gap the queueing cause adds
    (``QUEUEING_GAP_S``): it lengthens the task's end-to-end latency, Hound's latency (Section 5,
    E10), as much as a planted queueing delay does. Joined by ';', '' for none. Both re-launch the task and lose its progress, as Hound's
    eviction delay E11 (seed 003, Section 5.1, "Scheduling Problems"); generator 2 draws them at
    the real excerpt's rates (6.7 % / 1.4 % of tasks), so they make as many stragglers as the
    planted causes do."""
    parts = []
    if evictions > 0 and cause != EVICTION:
        parts.append("eviction")
    if failures > 0:
        parts.append("failure")
    if sched_delay_s is not None and sched_delay_s >= QUEUEING_GAP_S[0] and cause != QUEUEING_DELAY:
        parts.append("queueing")
    return ";".join(parts)


BACKGROUND_CAUSES = {"eviction": EVICTION, "queueing": QUEUEING_DELAY}   # background event -> Hound cause


def touched_causes(cause: str, background) -> set[str]:
    """The Hound causes that lengthened one task's run: its planted cause (unless 'none'), a
    background eviction and a background queueing delay (``background_events``)."""
    hit = {cause} if cause != "none" else set()
    return hit | {BACKGROUND_CAUSES[e] for e in str(background or "").split(";") if e in BACKGROUND_CAUSES}


def effective_causes(task_causes, task_background) -> JobCauses:
    """A job's mixture of the causes that lengthened its tasks' runs, over Hound's nine: per
    task its planted cause (if any), a background eviction and a background queueing delay, each
    counted once; weight = the cause's share of these (task, cause) pairs, largest first. The
    planted mixture gives the probabilities of the planted causes only; this one also counts the
    background evictions and queueing delays, which lengthen a task's end-to-end latency as the
    eviction and queueing causes do. Failures are not among Hound's nine
    causes (Table 4 names none; its ensemble dropped FAIL(+)) and are left out; they stay in
    ``background``. Empty when no task was touched."""
    counts: dict[str, int] = {}
    for cause, bg in zip(task_causes, task_background):
        for c in touched_causes(cause, bg):
            counts[c] = counts.get(c, 0) + 1
    total = sum(counts.values())
    order = sorted(counts, key=lambda c: (-counts[c], CAUSES.index(c)))
    return JobCauses(tuple(order), tuple(round(counts[c] / total, 6) for c in order))


def hash_name(*parts: object) -> str:
    """44-character base64 hash like the trace's user and job names."""
    h = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return base64.b64encode(h).decode("ascii")


def g4(x: float) -> str:
    """Format a float like the Google trace (4 significant digits)."""
    return "%.4g" % x


@dataclass
class TaskTruth:
    job_id: int
    task_index: int
    first_schedule_us: int | None = None
    final_finish_us: int | None = None
    evictions: int = 0
    failures: int = 0
    end_state: str = "NEVER"
    has_usage: bool = True
    cause: str = "none"
    severity: float = 0.0
    machine_slowdown: float = 1.0     # of the machine that ran the last attempt
    final_schedule_us: int | None = None
    evict_lost_s: float = 0.0         # time lost to evicted attempts, each up to the next SCHEDULE
    fail_lost_s: float = 0.0          # the same for failed attempts
    slow_start_s: float = 0.0         # the queueing cause's wait inside the last attempt (attempt 0 only)
    extra: dict = field(default_factory=dict)


@dataclass
class GenerationSummary:
    """What a generator wrote, its scale, and the ground truth."""

    trace: str                      # "google_2011" | "alibaba_2018"
    out_dir: "object"               # Path of the trace directory
    seed: int
    generator_version: str
    params: dict
    files: dict                     # relative path -> size in bytes
    counts: dict                    # rows per table, jobs, tasks, ...
    truth_jobs: "object"            # pandas.DataFrame
    truth_tasks: "object"           # pandas.DataFrame
    truth_dir: "object" = None      # Path where the truth parquet files went

    @property
    def total_bytes(self) -> int:
        return int(sum(self.files.values()))
