"""The Google-format generator's plan: which jobs the trace holds (the regular ones, the hand-made
ones each test names, the other jobs the selection rejects), each job's properties (submit time,
id, causes, waits, evictions, kills, latency, usage profile), and the machines.

See docs/SYNTHETIC_TRACE.md for the model and where each number comes from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from stragglers.settings.traces import SYNTHETIC_SPECIAL_JOBS

from . import model as M
from . import real_excerpt as R
from .formats import S, TRACE_START_US

# Scale and timing (docs/SYNTHETIC_TRACE.md says where each number comes from).
# REAL EXCERPT: per-job median task latency, tasks per job and SUBMIT -> SCHEDULE delay are
# drawn from the excerpt's quantiles (real_excerpt.py). COST CAP: the median latency is drawn
# below the excerpt's 95 % point (13,657 s; the longest real jobs would multiply the usage
# rows and checkpoints of the default run).
JOB_MEDIAN_RUN_UPTO = 0.95
# the job's lognormal noise sigma is NOISE_SHARE * ln(p90/p50) / z_0.9, ln(p90/p50) drawn from
# the excerpt; INVENTED share (tuned once on the excerpt: causes, slow machines and evictions
# make the rest of the spread)
NOISE_SHARE = 0.8
Z90 = 1.2815516
OTHER_JOB_MEDIAN_RUN_UPTO = 0.9             # COST CAP, as JOB_MEDIAN_RUN_UPTO
UPDATE_RUNNING_JOB_P = 0.3
UPDATE_RUNNING_TASK_P = 0.02
OTHER_JOB_MAX_TASKS = 99                    # COST CAP: other jobs are small (real: 90 % have <= 15 tasks)
PRODUCTION_CLASS_P = {1: 0.45, 2: 0.40, 3: 0.15}
PRODUCTION_PRIORITY_P = {9: 0.70, 10: 0.10, 11: 0.05, 2: 0.05, 4: 0.05, 8: 0.05}
N_SPECIAL_JOBS = SYNTHETIC_SPECIAL_JOBS     # the hand-made jobs, first (count kept with the setting)


@dataclass
class _Job:
    kind: str
    n_tasks: int
    sched_class: int                 # class on SUBMIT
    raised_class: int | None         # class after a later UPDATE_PENDING (kind 'raised')
    priority: int
    submit_us: int
    job_id: int = 0
    user: str = ""
    name: str = ""
    logical: str = ""
    causes: M.JobCauses | None = None
    failure_prone: bool = False
    kill_job: bool = False
    kill_at_finished: float = 0.99       # killed once this share of its tasks finished
    evict_p: float = R.SELECTED_TASK_EVICT_P
    median_wait_s: float | None = None   # per-job SUBMIT -> SCHEDULE median (None: pooled draws)
    first_fail_p: float = R.SELECTED_TASK_FAIL_P / M.FAILURE_PRONE_JOB_P
    pre_trace: bool = False
    service: bool = False
    median_run_s: float = 3600.0
    noise_sigma: float = 0.2
    req: tuple = (0.0625, 0.01, 0.0001)
    diff_machine: int = 0
    profile: dict = field(default_factory=dict)
    events: list = field(default_factory=list)   # (time, event type, class)

    @property
    def max_class(self) -> int:
        return max(self.sched_class, self.raised_class or 0)


@dataclass
class _Task:
    index: int
    events: list = field(default_factory=list)      # [time, type, machine_idx or -1, class]
    intervals: list = field(default_factory=list)   # [machine_idx, start, end, slow_end]
    truth: M.TaskTruth | None = None
    eff: M.Effect = field(default_factory=M.Effect)
    het: np.ndarray | None = None


def _draw_n_tasks(rng, lo, hi) -> int:
    n = int(round(float(R.draw(rng, R.SELECTED_JOB_TASKS))))
    return int(min(max(n, lo), hi))


def _choice(rng, p: dict) -> int:
    keys = list(p)
    w = np.array([p[k] for k in keys], dtype=float)
    return keys[int(rng.choice(len(keys), p=w / w.sum()))]


def _job_profile(rng) -> dict:
    """Job-level mean usage (normalized units like the trace). REAL EXCERPT: CPU rate, canonical
    memory, total page cache, disk I/O time, CPI and MAI drawn from the quantiles of the
    excerpt's usage sample (task and window variation come on top). INVENTED: the ratios
    (assigned/canonical memory, unmapped/total page cache, peaks) and the disk space range."""
    lu = lambda a, b: float(np.exp(rng.uniform(np.log(a), np.log(b))))
    u = lambda col, floor: float(R.draw(rng, R.USAGE[col], floor=floor))
    return dict(
        cpu=u("cpu_rate", 1e-5), mem=u("canonical_memory", 1e-4), assign_ratio=float(rng.uniform(1.0, 1.3)),
        pc=u("total_page_cache", 1e-5), unmapped_ratio=float(rng.uniform(0.2, 0.9)),
        io=u("disk_io_time", 1e-7), disk=lu(1e-5, 1e-3), peak_cpu=float(rng.uniform(1.5, 5.0)),
        peak_io=float(rng.uniform(2.0, 10.0)), cpi=u("cpi", 0.1),
        mai=u("mai", 1e-5), agg=int(rng.random() < 0.85), scpu=bool(rng.random() < 0.7),
    )


def _other_job(rng) -> _Job:
    """A job the selection rejects, as the excerpt's other jobs: small (tasks per job from the
    excerpt), production with the excerpt's share, failures, evictions and kills at its rates."""
    n = int(min(max(round(float(R.draw(rng, R.OTHER_JOB_TASKS))), 1), OTHER_JOB_MAX_TASKS))
    if rng.random() < R.OTHER_JOBS_PRODUCTION_SHARE:
        j = _Job("other", n, _choice(rng, PRODUCTION_CLASS_P), None, _choice(rng, PRODUCTION_PRIORITY_P), 0)
    else:
        j = _Job("other", n, 0, None, int(rng.integers(0, 2)), 0)
    j.evict_p = R.OTHER_TASK_EVICT_P
    j.first_fail_p = R.OTHER_TASK_FAIL_P / M.FAILURE_PRONE_JOB_P
    return j


def _plan_jobs(rng, n_jobs, min_tasks, max_tasks, other_jobs=None) -> list[_Job]:
    if n_jobs < N_SPECIAL_JOBS + 1:
        raise ValueError(f"n_jobs must be >= {N_SPECIAL_JOBS + 1}")
    lo, hi = min_tasks, max(max_tasks, min_tasks)
    jobs: list[_Job] = []

    def prod(kind, n, **kw):
        c = _choice(rng, PRODUCTION_CLASS_P)
        return _Job(kind, n, c, None, _choice(rng, PRODUCTION_PRIORITY_P), 0, **kw)

    for _ in range(n_jobs - N_SPECIAL_JOBS):
        jobs.append(prod("regular", _draw_n_tasks(rng, lo, hi)))
    jobs.append(prod("boundary_min", min_tasks))          # exactly min_tasks: selected
    jobs.append(prod("boundary_below", min_tasks - 1))    # min_tasks - 1: rejected
    j = prod("raised", _draw_n_tasks(rng, lo, min(hi, 600)))
    j.raised_class, j.sched_class = j.sched_class, 0      # 0 on SUBMIT, >=1 later
    jobs.append(j)
    jobs.append(_Job("class0_pretrace", _draw_n_tasks(rng, lo, min(hi, 400)), 0, None,
                     int(rng.integers(0, 2)), 0, pre_trace=True))
    jobs.append(_Job("class0", _draw_n_tasks(rng, lo, min(hi, 400)), 0, None,
                     int(rng.integers(0, 2)), 0))
    jobs.append(_Job("service", 20, 3, None, 10, 0, pre_trace=True, service=True))
    jobs.append(prod("no_tasks", 0))
    jobs.append(prod("no_tasks", 0))
    jobs.append(prod("small", int(rng.integers(5, 61))))
    n_regular = n_jobs - N_SPECIAL_JOBS
    n_other = round(R.OTHER_JOBS_PER_SELECTED_JOB * n_regular) if other_jobs is None else other_jobs
    jobs.extend(_other_job(rng) for _ in range(n_other))
    return jobs


def _machines(rng, n):
    """Machine IDs: distinct, spread over 1..4.4e9 like the real trace (about
    half above 2^31), at least two above 2^31 and one small."""
    ids = set()
    while len(ids) < n:
        ids.update(int(x) for x in rng.integers(1, 4_400_000_000, size=n - len(ids)))
    ids = sorted(ids)
    big = [i for i in ids if i > 2**31]
    if len(big) < 2 and n >= 3:
        ids[-2:] = [3_000_000_001 + k for k in range(2)]
    order = rng.permutation(len(ids))
    return np.array([ids[i] for i in order], dtype=np.int64)


def _draw_jobs(rng, seed, n_jobs, min_tasks, max_tasks, other_jobs, submit_span_s, skew_share) -> list[_Job]:
    """The trace's jobs, planned (``_plan_jobs``) and shuffled, each with its submit time, id, names
    and causes, and the properties drawn from the excerpt (waits, evictions, kills, latency, noise,
    requests, usage profile)."""
    jobs = _plan_jobs(rng, n_jobs, min_tasks, max_tasks, other_jobs)
    perm = rng.permutation(len(jobs))
    jobs = [jobs[i] for i in perm]
    in_window = [j for j in jobs if not j.pre_trace]
    submits = np.sort(rng.uniform(60, submit_span_s, size=len(in_window)))
    for j, s in zip(in_window, submits):
        j.submit_us = TRACE_START_US + int(s * S)
    ids = set()
    while len(ids) < len(in_window):
        ids.update(int(x) for x in rng.integers(6_200_000_000, 6_500_000_000, size=len(in_window)))
    for j, jid in zip(in_window, sorted(ids)[: len(in_window)]):
        j.job_id = jid
    for j in jobs:
        if j.pre_trace:   # submitted before the trace: small IDs, like the real 3418309
            j.job_id = int(rng.integers(1_000_000, 700_000_000))
            j.submit_us = 0
    for j in jobs:
        j.user = M.hash_name("user", seed, j.kind == "service", int(rng.integers(40)))
        j.name = M.hash_name("job", seed, j.job_id)
        j.logical = M.hash_name("logical", seed, int(rng.integers(60)))
        j.causes = M.draw_job_causes(rng, skew_share=skew_share)
        if j.kind != "other":
            # REAL EXCERPT (generator 3): evictions and waits are properties of the job, drawn
            # per job; generator 2 drew them per task from the pooled rates
            j.evict_p = float(R.draw(rng, R.SELECTED_JOB_EVICTED_SHARE, log=False))
            j.median_wait_s = float(R.draw(rng, R.SELECTED_JOB_MEDIAN_SCHEDULE_DELAY_S))
        # the in-window class-0 job is always failure-prone so FAIL/retry rows
        # exist at every scale (it is never selected)
        j.failure_prone = bool(rng.random() < M.FAILURE_PRONE_JOB_P) or j.kind == "class0"
        if j.kind == "regular":
            # REAL EXCERPT: share of the ended selected jobs that end KILL, killed once a share of
            # their tasks finished drawn from the excerpt's killed jobs (generator 3)
            j.kill_job = bool(rng.random() < R.SELECTED_JOB_END["KILL"] / (1 - R.SELECTED_JOB_END["none"]))
            j.kill_at_finished = float(R.draw(rng, R.KILLED_JOB_FINISHED_SHARE, log=False))
        elif j.kind == "other":
            j.kill_job = bool(rng.random() < R.OTHER_JOB_END["KILL"] / (1 - R.OTHER_JOB_END["none"]))
            j.kill_at_finished = float(rng.uniform(0.0, 1.0))
        upto = OTHER_JOB_MEDIAN_RUN_UPTO if j.kind == "other" else JOB_MEDIAN_RUN_UPTO
        j.median_run_s = float(R.draw(rng, R.JOB_P50_LATENCY_S, upto=upto))
        j.noise_sigma = NOISE_SHARE * float(R.draw(rng, R.JOB_LOG_P90_OVER_P50)) / Z90
        j.req = (float(rng.choice([0.0125, 0.025, 0.03125, 0.0625, 0.125])),
                 float(np.exp(rng.uniform(np.log(0.003), np.log(0.06)))),
                 float(np.exp(rng.uniform(np.log(1e-5), np.log(5e-3)))))
        j.diff_machine = int(rng.random() < 0.1)
        j.profile = _job_profile(rng)
        j.profile["upd_p"] = UPDATE_RUNNING_TASK_P if rng.random() < UPDATE_RUNNING_JOB_P else 0.0
    return jobs
