"""Synthetic trace in the exact layout of Google clusterdata-2011-2.

See docs/SYNTHETIC_TRACE.md for the model and where each number comes from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.traces.settings import SYNTHETIC_SPECIAL_JOBS

from . import model as M
from . import real_excerpt as R
from .formats import (
    file_sizes,
    mark_empty_parts_on_purpose,
    published_dir,
    EVICT, FAIL, FINISH, KILL, LOST, SCHEDULE, SENTINEL_US, SUBMIT, TRACE_START_US,
    UPDATE_PENDING, UPDATE_RUNNING, USAGE_WINDOW_US, EVENT_NAMES, part_name,
    schema_csv_text, write_gzip_lines, write_text,
)

S = 1_000_000  # microseconds per second

# Scale and timing (docs/SYNTHETIC_TRACE.md says where each number comes from).
SUBMIT_SPAN_S = 6 * 3600                    # INVENTED: jobs arrive over the first 6 hours
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
# INVENTED: a cause's severity median scales with the job's noise (0.6 at the former mean
# sigma 0.21): jobs whose tasks all take the same time get mild stragglers
SEVERITY_PER_SIGMA = M.SEVERITY_MEDIAN / 0.21
# a re-submitted task waits like a new one (excerpt's SUBMIT -> SCHEDULE quantiles) but below the
# excerpt's 90 % point (52 s): INVENTED cap, tuned once on the excerpt's max/p50 (with the full tail
# a 30 s task evicted once could wait 6,000 s, and max/p50 reached 25 in 10 % of the jobs, 5 in the excerpt)
RESCHEDULE_DELAY_UPTO = 0.9
OTHER_JOB_MAX_TASKS = 99                    # COST CAP: other jobs are small (real: 90 % have <= 15 tasks)
OTHER_JOB_MEDIAN_RUN_UPTO = 0.9             # COST CAP, as JOB_MEDIAN_RUN_UPTO
PRODUCTION_CLASS_P = {1: 0.45, 2: 0.40, 3: 0.15}
PRODUCTION_PRIORITY_P = {9: 0.70, 10: 0.10, 11: 0.05, 2: 0.05, 4: 0.05, 8: 0.05}
UPDATE_RUNNING_JOB_P = 0.3
UPDATE_RUNNING_TASK_P = 0.02
LOW_PRIORITY_EVICT_P = 0.05                 # class-0 (gratis) tasks are preempted more
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


class _Sim:
    def __init__(self, rng, machine_slow, slow_pool):
        self.rng = rng
        self.slow = machine_slow
        self.slow_pool = slow_pool
        self.n_m = len(machine_slow)

    def pick_machine(self, avoid=-1, contended=False):
        rng = self.rng
        while True:
            if contended:
                m = int(self.slow_pool[rng.integers(len(self.slow_pool))])
            else:
                m = int(rng.integers(self.n_m))
            if m != avoid or self.n_m == 1:
                return m

    def run_task(self, job: _Job, t: _Task, submit_us: int, cls_after: int, raise_us: int | None):
        """Simulate one task's attempts; fills t.events / t.intervals / t.truth."""
        rng = self.rng
        tr = t.truth
        eff = t.eff
        cls0 = job.sched_class
        ev = t.events
        ev.append([submit_us, SUBMIT, -1, cls0])
        if raise_us is not None:
            ev.append([raise_us, UPDATE_PENDING, -1, cls_after])
        cls = cls_after
        if rng.random() < M.NEVER_SCHEDULED_P and not job.service:
            ev.append([submit_us + int(rng.uniform(30, 600) * S), KILL, -1, cls])
            tr.end_state = "NEVER"
            return
        noise = float(rng.lognormal(0.0, job.noise_sigma))
        tr.extra["noise"] = noise           # the re-execution writer's first-life noise
        work_s = job.median_run_s * noise * eff.latency
        if job.median_wait_s is not None:   # waits are per job in the excerpt (generator 3)
            wait = job.median_wait_s * float(R.draw(rng, R.SCHEDULE_DELAY_OVER_JOB_MEDIAN))
        else:
            wait = float(R.draw(rng, R.SCHEDULE_DELAY_S))
        gap = wait + eff.queue_gap_s
        now = submit_us + int(gap * S)
        if raise_us is not None:
            now = max(now, raise_us + S)
        n_evict = 0
        evicted_for_good = False
        if eff.evict:
            n_evict = 1 + int(rng.random() < 0.2)
        elif rng.random() < (LOW_PRIORITY_EVICT_P if job.max_class == 0 else job.evict_p):
            # REAL EXCERPT: an evicted task is often evicted again (generator 3)
            n_evict = _choice(rng, R.EVICTIONS_PER_EVICTED_TASK)
            # REAL EXCERPT: 97 % of evicted tasks never finish; here the last attempt is killed
            # (the excerpt's 23 % still evicted at its end are folded into KILL)
            evicted_for_good = rng.random() >= R.EVICTED_TASK_FINISH_P
        budget = M.retry_budget(rng)
        r = rng.random()
        terminal = KILL if evicted_for_good or r < M.KILL_TASK_P else (
            LOST if r < M.KILL_TASK_P + M.LOST_TASK_P else None)
        m = self.pick_machine(contended=(tr.cause == M.LIMITED_PROCESSOR))
        attempt = 0
        while True:
            if tr.first_schedule_us is None:
                tr.first_schedule_us = now
            tr.final_schedule_us = now
            tr.machine_slowdown = float(self.slow[m])   # the machine of the last attempt
            ev.append([now, SCHEDULE, m, cls])
            run_s = work_s * self.slow[m]
            slow_s = eff.slow_start * work_s if attempt == 0 else 0.0
            tr.slow_start_s = slow_s
            length_us = int((run_s + slow_s) * S)
            slow_end = now + int(slow_s * S)
            if tr.evictions < n_evict:
                end = now + int(rng.uniform(0.2, 0.9) * length_us)
                etype = EVICT
                tr.evictions += 1
            else:
                if job.failure_prone:
                    p_fail = (job.first_fail_p if tr.failures == 0
                              else 1.0 - M.ELSAYED_ATTEMPT_SUCCESS[min(tr.failures, 3)])
                else:
                    p_fail = 0.0
                if rng.random() < p_fail:
                    end = now + int(rng.uniform(*M.FAIL_AT_FRACTION) * length_us)
                    etype = FAIL
                    tr.failures += 1
                elif terminal is not None:
                    end = now + int(rng.uniform(0.1, 0.9) * length_us)
                    etype = terminal
                else:
                    end = now + length_us
                    etype = FINISH
            end = max(end, now + 1)
            t.intervals.append([m, now, end, slow_end])
            if etype == FINISH and rng.random() < job.profile.get("upd_p", 0.0):
                ev.append([now + (end - now) // 2, UPDATE_RUNNING, m, cls])
            ev.append([end, etype, m, cls])
            if etype == FINISH:
                tr.final_finish_us = end
                tr.end_state = "FINISH"
                return
            if etype in (KILL, LOST):
                tr.end_state = EVENT_NAMES[etype]
                return
            if etype == FAIL and tr.failures > budget:
                tr.end_state = "FAIL"
                return
            # re-submitted, then re-scheduled on another machine; progress lost
            resub = end + int(rng.uniform(0.0, 1.0) * S)
            ev.append([resub, SUBMIT, -1, cls])
            if etype == EVICT and not eff.evict:
                # REAL EXCERPT: a background eviction re-queues the task for the excerpt's
                # EVICT -> SCHEDULE delay (median 111 s, p90 1 h): most evicted tasks of the
                # excerpt never finish (3 % do). The planted eviction cause keeps the short wait,
                # so its tasks finish and are the stragglers Hound sees (Table 4, E11).
                wait = float(R.draw(rng, R.EVICT_RESCHEDULE_DELAY_S))
            else:
                wait = float(R.draw(rng, R.SCHEDULE_DELAY_S, upto=RESCHEDULE_DELAY_UPTO))
            started, now = tr.final_schedule_us, resub + int(wait * S)
            if etype == EVICT:   # the time an attempt lost, up to the next SCHEDULE (the truth's counterfactual)
                tr.evict_lost_s += (now - started) / S
            else:
                tr.fail_lost_s += (now - started) / S
            m = self.pick_machine(avoid=m, contended=(tr.cause == M.LIMITED_PROCESSOR))
            attempt += 1


def _write_reexecutions(rng, jobs, tasks_by_job, mslow, share: float) -> pd.DataFrame:
    """Run again, after its FINISH, a share of the finished tasks of every in-window job not killed, as
    the real trace does (sql/reexecution_pairs.sql reads them): SUBMIT just after the FINISH, SCHEDULE
    on another machine after the excerpt's FINISH -> SCHEDULE gap, FINISH after the generator's
    re-execution model's latency (model.reexecution_work_s x that machine's slowdown). Own random
    stream ``rng``, after the first lives: those and the truth stay bit-identical. Returns one row per
    task run again (job_id, task_id, first and second machine index, second_latency_s)."""
    rows = []
    for j in jobs:
        if j.pre_trace or j.service or j.kill_job:
            continue
        for t in tasks_by_job[j.job_id]:
            tr = t.truth
            if tr.end_state != "FINISH" or rng.random() >= share:
                continue
            first_m = t.intervals[-1][0]
            m = first_m
            while m == first_m:
                m = int(rng.integers(len(mslow)))
            work = M.reexecution_work_s(rng, median_run_s=[j.median_run_s], noise_sigma=[j.noise_sigma],
                                        noise_ln=[np.log(tr.extra["noise"])], cause=[tr.cause], severity=[tr.severity])
            latency_us = max(int(float(work[0]) * mslow[m] * S), 1)
            gap_us = max(int(float(R.draw(rng, R.REEXECUTION_GAP_S)) * S), 2)
            cls = t.events[-1][3]
            finish = tr.final_finish_us
            start = finish + gap_us
            t.events.append([finish + min(int(rng.uniform(0.0, 1.0) * S), gap_us // 2), SUBMIT, -1, cls])
            t.events.append([start, SCHEDULE, m, cls])
            t.events.append([start + latency_us, FINISH, m, cls])
            t.intervals.append([m, start, start + latency_us, start])
            rows.append((j.job_id, t.index, first_m, m, latency_us / S))
    return pd.DataFrame(rows, columns=["job_id", "task_id", "first_machine_index", "second_machine_index",
                                       "second_latency_s"])


def _truncate(t: _Task, k_us: int) -> None:
    """Job killed at k_us: drop what happens after, KILL what is still alive."""
    tr = t.truth
    if t.events[-1][0] <= k_us:
        return
    t.events = [e for e in t.events if e[0] <= k_us]
    t.intervals = [iv for iv in t.intervals if iv[1] < k_us]
    running_m = -1
    if t.intervals and t.intervals[-1][2] > k_us:
        t.intervals[-1][2] = k_us
        running_m = t.intervals[-1][0]
    cls = t.events[-1][3]
    t.events.append([k_us, KILL, running_m, cls])
    tr.final_finish_us = None
    tr.end_state = "KILL" if tr.first_schedule_us is not None and tr.first_schedule_us <= k_us else "NEVER"
    if tr.first_schedule_us is not None and tr.first_schedule_us > k_us:
        tr.first_schedule_us = None
    tr.evictions = sum(1 for e in t.events if e[1] == EVICT)
    tr.failures = sum(1 for e in t.events if e[1] == FAIL)


def _fmt_float_col(values: np.ndarray, missing: np.ndarray | None = None) -> list[str]:
    out = ["%.4g" % v for v in values.tolist()]
    if missing is not None:
        for i in np.flatnonzero(missing).tolist():
            out[i] = ""
    return out


def generate_google(
    out_dir: Path,
    *,
    seed: int = 2011,
    n_jobs: int = 48,
    min_tasks: int = 100,
    max_tasks: int = 2000,
    n_parts: int = 8,
    n_machines: int = 600,
    submit_span_s: int = SUBMIT_SPAN_S,
    truth_dir: Path | None = None,
    other_jobs: int | None = None,
    reexecuted_share: float = 0.0,
    cause_mix: str = "hound",
    skew_share: float | None = None,
) -> M.GenerationSummary:
    """Write a synthetic clusterdata-2011-2 trace under out_dir (replacing it).

    ``reexecuted_share`` > 0: that share of the finished tasks of the jobs not killed runs again on
    another machine after its FINISH (``_write_reexecutions``; the real excerpt's rate is
    ``real_excerpt.FINISHED_TASK_RERUN_P``); 0, the default, writes none (the embedded trace).
    ``cause_mix``: a name of ``model.CAUSE_MIXES`` (the jobs' cause mix; 'hound', the default, is the
    embedded trace); ``skew_share`` overrides its share of the skew causes kept (the fit's grid).

    Deterministic: same arguments -> byte-identical files. Returns the
    summary with ground-truth frames; writes them as parquet to truth_dir
    (which must not be inside out_dir) when given.
    """
    out_dir = Path(out_dir)
    if truth_dir is not None:
        truth_dir = Path(truth_dir)
        if truth_dir.resolve().is_relative_to(out_dir.resolve()):
            raise ValueError("truth_dir must not be inside the trace directory")
    if not 0.0 <= reexecuted_share <= 1.0:
        raise ValueError(f"reexecuted_share={reexecuted_share}: must lie in [0, 1]")
    if cause_mix not in M.CAUSE_MIXES:
        raise ValueError(f"cause_mix={cause_mix!r}: must be one of {', '.join(M.CAUSE_MIXES)}")
    skew_share = M.CAUSE_MIXES[cause_mix] if skew_share is None else float(skew_share)
    M.cause_mix_coverages(skew_share)   # bounds checked before anything is written
    if n_parts < 1 or n_machines < 2 or min_tasks < 2:
        raise ValueError("n_parts >= 1, n_machines >= 2, min_tasks >= 2 required")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2011]))

    # --- machines ---------------------------------------------------------
    machine_ids = _machines(rng, n_machines)
    mtype = M.machine_types(rng, n_machines)
    mslow = M.machine_slowdowns(rng, n_machines)
    slow_pool = np.argsort(-mslow)[: max(1, n_machines // 5)]

    # --- jobs -------------------------------------------------------------
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

    sim = _Sim(rng, mslow, slow_pool)
    tasks_by_job: dict[int, list[_Task]] = {}
    for j in jobs:
        tasks: list[_Task] = []
        labels, sev = M.assign_task_causes(rng, j.n_tasks, j.causes,
                                           severity_median=SEVERITY_PER_SIGMA * max(j.noise_sigma, 1e-3))
        raise_us = j.submit_us + S // 2 if j.raised_class is not None else None
        cls_after = j.raised_class if j.raised_class is not None else j.sched_class
        for i in range(j.n_tasks):
            t = _Task(i)
            t.truth = M.TaskTruth(j.job_id, i, cause=labels[i], severity=float(sev[i]))
            t.eff = M.cause_effect(labels[i], float(sev[i]), rng)
            t.het = rng.lognormal(0.0, M.TASK_USAGE_SIGMA, size=8)
            t.truth.has_usage = not (rng.random() < M.NO_USAGE_P)
            if j.pre_trace:
                _run_pretrace_task(sim, j, t)
            else:
                sim.run_task(j, t, j.submit_us, cls_after, raise_us)
            tasks.append(t)
        if j.kill_job:
            ends = sorted(t.truth.final_finish_us for t in tasks if t.truth.final_finish_us)
            if ends:
                k_us = ends[max(0, int(np.ceil(j.kill_at_finished * len(ends))) - 1)]
                for t in tasks:
                    _truncate(t, k_us)
        tasks_by_job[j.job_id] = tasks

    reexecutions = None
    if reexecuted_share > 0:
        reexecutions = _write_reexecutions(np.random.default_rng(np.random.SeedSequence([seed, 2011, 36])),
                                           jobs, tasks_by_job, mslow, reexecuted_share)

    # at least one UPDATE_RUNNING row at every scale: mid-run of the longest
    # finished task of a non-selected job (if the random ones produced none)
    if not any(e[1] == UPDATE_RUNNING for ts in tasks_by_job.values() for t in ts for e in t.events):
        pool = [t for j in jobs if j.kind in ("class0", "boundary_below", "small")
                for t in tasks_by_job[j.job_id] if t.truth.end_state == "FINISH"]
        if pool:
            t = max(pool, key=lambda t: (t.intervals[-1][2] - t.intervals[-1][1], t.truth.job_id, t.index))
            m, s0, e0, _ = t.intervals[-1]
            t.events.insert(len(t.events) - 1, [s0 + (e0 - s0) // 2, UPDATE_RUNNING, m, t.events[-1][3]])

    # --- trace end ----------------------------------------------------------
    last = TRACE_START_US
    for tasks in tasks_by_job.values():
        for t in tasks:
            for e in t.events:
                if e[0] != SENTINEL_US:
                    last = max(last, e[0])
    trace_end = ((last // USAGE_WINDOW_US) + 2) * USAGE_WINDOW_US

    # --- job events ---------------------------------------------------------
    for j in jobs:
        tasks = tasks_by_job[j.job_id]
        j.events = [(j.submit_us, SUBMIT, j.sched_class)]
        if j.raised_class is not None:
            j.events.append((j.submit_us + S // 2, UPDATE_PENDING, j.raised_class))
        cls = j.max_class if j.raised_class is not None else j.sched_class
        if j.kind == "no_tasks":
            j.events.append((j.submit_us + int(rng.uniform(60, 1800) * S), KILL, cls))
            continue
        scheds = [t.truth.first_schedule_us for t in tasks if t.truth.first_schedule_us is not None]
        if scheds:
            j.events.append((min(scheds), SCHEDULE, cls))
        if j.service:
            j.events.append((SENTINEL_US, KILL, cls))
            continue
        end = max(t.events[-1][0] for t in tasks)
        states = {t.truth.end_state for t in tasks}
        etype = KILL if j.kill_job else (FAIL if "FAIL" in states else FINISH)
        j.events.append((end, etype, cls))

    # --- rows ---------------------------------------------------------------
    slice_us = -(-(trace_end - TRACE_START_US) // n_parts)

    def part_of(tu: int) -> int:
        return int(min(max((tu - TRACE_START_US) // slice_us, 0), n_parts - 1))

    je_rows: list[list] = [[] for _ in range(n_parts)]
    for j in jobs:
        for k, (tu, et, cls) in enumerate(j.events):
            line = f"{tu},,{j.job_id},{et},{j.user},{cls},{j.name},{j.logical}"
            je_rows[part_of(tu)].append((tu, j.job_id, k, line))

    # missing-info field: a few rows (~0.013% of task events; at least 4)
    n_task_events = sum(len(t.events) for ts in tasks_by_job.values() for t in ts)
    cand = []
    for j in jobs:
        selected = j.max_class >= 1 and j.n_tasks >= 100
        for t in tasks_by_job[j.job_id]:
            for k, e in enumerate(t.events):
                if e[1] == UPDATE_RUNNING or (not selected and e[1] == FINISH):
                    cand.append((j.job_id, t.index, k))
    n_missing = min(len(cand), max(4, int(round(0.00013 * n_task_events))))
    missing = {cand[i] for i in rng.choice(len(cand), size=n_missing, replace=False)} if cand else set()

    te_rows: list[list] = [[] for _ in range(n_parts)]
    for j in jobs:
        cpu_r, mem_r, disk_r = ("%.4g" % x for x in j.req)
        for t in tasks_by_job[j.job_id]:
            for k, (tu, et, mi, cls) in enumerate(t.events):
                mid = "" if mi < 0 else str(int(machine_ids[mi]))
                mis = str(int(rng.integers(0, 3))) if (j.job_id, t.index, k) in missing else ""
                line = (f"{tu},{mis},{j.job_id},{t.index},{mid},{et},{j.user},{cls},{j.priority},"
                        f"{cpu_r},{mem_r},{disk_r},{j.diff_machine}")
                te_rows[part_of(tu)].append((tu, j.job_id, t.index, k, line))

    usage_lines, usage_start = _usage_rows(rng, jobs, tasks_by_job, machine_ids, mslow, trace_end)
    tu_parts = np.minimum(np.maximum((usage_start - TRACE_START_US) // slice_us, 0), n_parts - 1)

    # --- write ----------------------------------------------------------------
    with published_dir(out_dir) as stage:
        mark_empty_parts_on_purpose(stage)   # its time slices without events are parts without rows
        for p in range(n_parts):
            write_gzip_lines(stage / part_name("job_events", p, n_parts),
                             [r[-1] for r in sorted(je_rows[p], key=lambda r: r[:-1])])
            write_gzip_lines(stage / part_name("task_events", p, n_parts),
                             [r[-1] for r in sorted(te_rows[p], key=lambda r: r[:-1])])
            idx = np.flatnonzero(tu_parts == p)
            write_gzip_lines(stage / part_name("task_usage", p, n_parts),
                             [usage_lines[i] for i in idx.tolist()])
        plat = [M.hash_name("platform", k) for k in range(len(M.OUYANG_SERVER_TYPES))]
        me = [f"0,{int(machine_ids[i])},0,{plat[mtype[i]]},{M.OUYANG_SERVER_TYPES[mtype[i]][0]:.4g},"
              f"{M.OUYANG_SERVER_TYPES[mtype[i]][1]:.4g}" for i in np.argsort(machine_ids)]
        write_gzip_lines(stage / "machine_events" / "part-00000-of-00001.csv.gz", me)
        write_text(stage / "schema.csv",
                   schema_csv_text(("job_events", "machine_events", "task_events", "task_usage")))

    files = file_sizes(out_dir)

    truth_jobs, truth_tasks = _truth_frames(jobs, tasks_by_job)
    counts = dict(
        jobs=len(jobs),
        jobs_with_task_events=int((truth_jobs.n_tasks > 0).sum()),
        selected_jobs=int(truth_jobs.should_select.sum()),
        tasks=int(len(truth_tasks)),
        selected_tasks=int(truth_tasks.job_id.isin(truth_jobs.job_id[truth_jobs.should_select]).sum()),
        job_events=sum(len(r) for r in je_rows),
        task_events=sum(len(r) for r in te_rows),
        usage_rows=len(usage_lines),
        machines=n_machines,
        trace_end_us=int(trace_end),
        part_slice_us=int(slice_us),
    )
    params = dict(seed=seed, n_jobs=n_jobs, min_tasks=min_tasks, max_tasks=max_tasks,
                  n_parts=n_parts, n_machines=n_machines, submit_span_s=submit_span_s)
    if skew_share != 1.0:   # the default's params (and generation.json) stay as they were
        params.update(cause_mix=cause_mix, skew_share=skew_share)
    if reexecutions is not None:
        params["reexecuted_share"] = reexecuted_share
        counts["reexecuted_tasks"] = len(reexecutions)
        reexecutions = reexecutions.assign(
            first_machine=machine_ids[reexecutions.first_machine_index.to_numpy(int)],
            second_machine=machine_ids[reexecutions.second_machine_index.to_numpy(int)])
    summary = M.GenerationSummary("google_2011", out_dir, seed, M.GENERATOR_VERSION, params, files,
                                  counts, truth_jobs, truth_tasks, reexecutions=reexecutions)
    if truth_dir is not None:
        _write_truth(truth_dir, summary)
    return summary


def _run_pretrace_task(sim: _Sim, j: _Job, t: _Task) -> None:
    """Tasks of jobs submitted before the trace: SUBMIT and SCHEDULE at time 0,
    running when the trace starts. Services end after the trace (2^63-1)."""
    rng = sim.rng
    tr = t.truth
    m = sim.pick_machine()
    tr.machine_slowdown = float(sim.slow[m])
    tr.first_schedule_us = tr.final_schedule_us = 0
    t.events.append([0, SUBMIT, -1, j.sched_class])
    t.events.append([0, SCHEDULE, m, j.sched_class])
    if j.service:
        t.intervals.append([m, 0, SENTINEL_US, 0])
        t.events.append([SENTINEL_US, KILL, m, j.sched_class])
        tr.end_state = "KILL"
        return
    end = TRACE_START_US + int(j.median_run_s * rng.lognormal(0.0, j.noise_sigma) * rng.uniform(0.2, 1.0) * S)
    t.intervals.append([m, 0, end, 0])
    t.events.append([end, FINISH, m, j.sched_class])
    tr.final_finish_us = end
    tr.end_state = "FINISH"


def _usage_rows(rng, jobs, tasks_by_job, machine_ids, mslow, trace_end):
    """task_usage rows (formatted lines, sorted by start time) and their start times."""
    iv_job, iv_task, iv_m, iv_s, iv_e, iv_slow, iv_t0 = [], [], [], [], [], [], []
    task_rows = []   # per task: (job j index, task object)
    for ji, j in enumerate(jobs):
        for t in tasks_by_job[j.job_id]:
            if not t.truth.has_usage or not t.intervals:
                continue
            ti = len(task_rows)
            task_rows.append((ji, t))
            for m, s, e, se in t.intervals:
                s2, e2 = max(s, TRACE_START_US), min(e, trace_end)
                if e2 <= s2:
                    continue
                iv_task.append(ti); iv_job.append(ji); iv_m.append(m)
                iv_s.append(s2); iv_e.append(e2); iv_slow.append(se); iv_t0.append(s)
    if not iv_s:
        return [], np.zeros(0, dtype=np.int64)
    P = USAGE_WINDOW_US
    s = np.array(iv_s, dtype=np.int64); e = np.array(iv_e, dtype=np.int64)
    k0 = s // P
    k1 = (e - 1) // P
    nwin = (k1 - k0 + 1).astype(np.int64)
    rep = np.repeat(np.arange(len(s)), nwin)
    off = np.arange(len(rep)) - np.repeat(np.cumsum(nwin) - nwin, nwin)
    k = k0[rep] + off
    ws = np.maximum(s[rep], k * P)
    we = np.minimum(e[rep], (k + 1) * P)
    n = len(rep)

    ti = np.array(iv_task)[rep]
    ji = np.array(iv_job)[rep]
    mi = np.array(iv_m)[rep]
    t0 = np.array(iv_t0, dtype=np.int64)[rep]
    slow_end = np.array(iv_slow, dtype=np.int64)[rep]
    dur = (we - ws).astype(float)
    elapsed = ((ws + we) / 2.0 - np.maximum(t0, 0)) / S
    ramp = 0.5 + 0.5 * np.minimum(1.0, elapsed / 600.0)
    phi = np.clip((np.minimum(we, slow_end) - ws) / np.maximum(dur, 1.0), 0.0, 1.0)

    # per task arrays
    def tarr(f):
        return np.array([f(jobs[a], t) for a, t in task_rows], dtype=float)[ti]
    prof = lambda key: tarr(lambda j, t: j.profile[key])
    het = np.array([t.het for _, t in task_rows])[ti]
    eff = lambda key: tarr(lambda j, t: getattr(t.eff, key))
    ksl = mslow[mi]
    noise = lambda: rng.lognormal(0.0, M.WINDOW_USAGE_SIGMA, size=n)

    cpu = prof("cpu") * het[:, 0] * eff("cpu") * ksl ** -0.5 * (1.0 - 0.9 * phi) * noise()
    cmu = prof("mem") * het[:, 1] * eff("mem") * ramp * (1.0 - 0.6 * phi) * noise()
    amu = cmu * prof("assign_ratio") * rng.uniform(1.0, 1.05, size=n)
    tpc = prof("pc") * het[:, 2] * eff("page_cache") * ramp * noise()
    upc = tpc * prof("unmapped_ratio") * rng.uniform(0.8, 1.0, size=n)
    maxmu = cmu * (1.0 + rng.exponential(0.1, size=n))
    mio = prof("io") * het[:, 3] * eff("io") * noise()
    mdk = prof("disk") * het[:, 4] * eff("disk_space") * ramp * noise()
    maxcpu = np.maximum(prof("cpu") * het[:, 0] * eff("max_cpu") * ksl ** -0.3 * prof("peak_cpu") * noise(),
                        cpu * 1.05)
    maxio = np.maximum(prof("io") * het[:, 3] * eff("max_io") * prof("peak_io") * noise(), mio * 1.05)
    cpi = prof("cpi") * het[:, 5] * eff("cpi") * ksl ** 0.5 * noise()
    mai = prof("mai") * het[:, 6] * eff("mai") * noise()
    tiny = dur < 1.0 * S   # impossible CPI/MAI on tiny-CPU-time windows (trace notes)
    absurd = tiny & (rng.random(n) < 0.5)
    cpi = np.where(absurd, cpi * rng.uniform(20, 200, size=n), cpi)
    mai = np.where(absurd, mai * rng.uniform(5, 50, size=n), mai)
    sample_portion = np.where(rng.random(n) < 0.1, rng.uniform(0.0, 1.0, size=n), 0.0)
    agg = np.where(rng.random(n) < 0.05, 1 - prof("agg"), prof("agg")).astype(int)
    scpu = cpu * rng.lognormal(0.0, 0.3, size=n)

    miss_cpi = rng.random(n) < 0.01          # no perf counters: CPI and MAI empty
    miss_maxcpu = rng.random(n) < 0.01
    miss_scpu = (prof("scpu") == 0) | (rng.random(n) < 0.02)

    cols = [
        ws.tolist(), we.tolist(),
        [jobs[a].job_id for a in ji.tolist()], [task_rows[x][1].index for x in ti.tolist()],
        machine_ids[mi].tolist(),
        _fmt_float_col(cpu), _fmt_float_col(cmu), _fmt_float_col(amu), _fmt_float_col(upc),
        _fmt_float_col(tpc), _fmt_float_col(maxmu), _fmt_float_col(mio), _fmt_float_col(mdk),
        _fmt_float_col(maxcpu, miss_maxcpu), _fmt_float_col(maxio),
        _fmt_float_col(cpi, miss_cpi), _fmt_float_col(mai, miss_cpi),
        _fmt_float_col(sample_portion), agg.tolist(), _fmt_float_col(scpu, miss_scpu),
    ]
    order = np.lexsort((we, np.array(cols[3]), np.array(cols[2], dtype=np.int64), ws))
    lines = [",".join(map(str, row)) for row in zip(*cols)]
    return [lines[i] for i in order.tolist()], ws[order]


def _truth_frames(jobs, tasks_by_job):
    jrows, trows = [], []
    for j in jobs:
        tasks = tasks_by_job[j.job_id]
        n_fin = sum(1 for t in tasks if t.truth.end_state == "FINISH")
        sched_delay = [(t.truth.first_schedule_us - j.submit_us) / S
                       if t.truth.first_schedule_us is not None and j.submit_us > 0 else None for t in tasks]
        background = [M.background_events(t.truth.cause, t.truth.evictions, t.truth.failures, d)
                      for t, d in zip(tasks, sched_delay)]
        ran = [i for i, t in enumerate(tasks) if t.truth.first_schedule_us is not None]
        effective = M.effective_causes([tasks[i].truth.cause for i in ran], [background[i] for i in ran])
        jrows.append(dict(
            job_id=j.job_id, kind=j.kind, n_tasks=len(tasks),
            first_scheduling_class=j.sched_class, max_scheduling_class=j.max_class,
            priority=j.priority,
            should_select=bool(j.max_class >= 1 and len(tasks) >= 100),
            should_select_priority_rule=bool(j.priority in (9, 10, 11) and len(tasks) >= 100),
            n_finished=n_fin, submit_us=j.submit_us, causes=j.causes.label(),
            causes_effective=effective.label(),
            failure_prone=j.failure_prone, job_killed=j.kill_job,
            median_run_s=j.median_run_s, noise_sigma=j.noise_sigma, median_wait_s=j.median_wait_s,
        ))
        for t, bg in zip(tasks, background):
            tr = t.truth
            lat = None
            if (tr.end_state == "FINISH" and tr.first_schedule_us is not None
                    and tr.first_schedule_us >= TRACE_START_US):
                lat = tr.final_finish_us - tr.first_schedule_us
            trows.append(dict(
                job_id=tr.job_id, task_index=tr.task_index,
                first_schedule_us=tr.first_schedule_us, final_finish_us=tr.final_finish_us,
                latency_us=lat, evictions=tr.evictions, failures=tr.failures,
                end_state=tr.end_state, has_usage=bool(tr.has_usage and t.intervals),
                cause=tr.cause, background=bg, severity=tr.severity, machine_slowdown=tr.machine_slowdown,
                final_schedule_us=tr.final_schedule_us, evict_lost_s=tr.evict_lost_s, fail_lost_s=tr.fail_lost_s,
                slow_start_s=tr.slow_start_s,
                job_causes=j.causes.label(),
            ))
    tj = pd.DataFrame(jrows).sort_values("job_id").reset_index(drop=True)
    tt = pd.DataFrame(trows)
    for c in ("first_schedule_us", "final_schedule_us", "final_finish_us", "latency_us"):
        tt[c] = tt[c].astype("Int64")
    tt = tt.sort_values(["job_id", "task_index"]).reset_index(drop=True)
    return tj, tt


def _write_truth(truth_dir: Path, summary: M.GenerationSummary) -> None:
    import json
    truth_dir.mkdir(parents=True, exist_ok=True)
    for name, df in (("truth_jobs", summary.truth_jobs), ("truth_tasks", summary.truth_tasks)):
        tmp = truth_dir / f".{name}.parquet.tmp"
        df.to_parquet(tmp, index=False)
        tmp.replace(truth_dir / f"{name}.parquet")
    meta = dict(trace=summary.trace, seed=summary.seed, generator_version=summary.generator_version,
                params=summary.params, counts=summary.counts, total_bytes=summary.total_bytes)
    write_text(truth_dir / "generation.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")
    summary.truth_dir = truth_dir
