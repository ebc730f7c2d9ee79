"""Online replay of a job (docs/PROTOCOL.md section 4, NURD paper Algorithm 1).

On the paper's grid all tasks of a job share a clock that starts at each task's own start: at
checkpoint t a task is finished iff its latency y <= t. On the operator's wall clock
(``JobData.start``, stragglers/prediction/replay/clock.py) task i starts at start_i after the job's
origin: at decision W it has ended iff start_i + y_i <= W, it runs iff start_i <= W and it has
not ended (it has run W - start_i), and a task not started yet is pending (no candidate, in
neither F_t nor R_t). Every time below (decisions, flags) is then a time on that clock. Per job:

The operator's replay also holds the tasks that end without finishing (``JobData.finished``):
such a task is a candidate while it runs, is never in F_t, and leaves R_t when it ends.

1. k = 0, t0: the first ``initial_fraction`` of tasks have finished. The
   method's ``begin(F0, R0, t0)`` sees them; nothing is flagged.
2. k = 1, 2, ...: ``fit(F_t, R_t, t)`` then ``flag(candidates)``. A flag is
   for good: the task is never scored again (``flagged_at_s`` keeps the first).
3. A task is predicted a straggler iff it was flagged before it finished;
   metrics are over the tasks running at t0 (a method may restrict them,
   Wrangler evaluates on its test third).

Decision (not in the paper, documented in docs/PROTOCOL_DECISIONS.md): F_t
and R_t are defined by the trace alone (F_t = {y <= t}, R_t = {y > t}); a
flag removes a task from the candidates, not from the training data. This is
what lets NURD, NURD-NC and GBTR share one fit per checkpoint, and puts
every method on the same training data.

No look-ahead: at checkpoint k the method gets X[k] (features as visible at
t_k) and the latencies of tasks with y <= t_k only.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from stragglers.prediction.methods.base import DEGENERATE_DATA_ERRORS, CannotFit, JobContext, Method, TaskSet
from stragglers.prediction.replay.metrics import f1_auc, job_scores, median_lead

N_TIME_POINTS = 10  # F1 over normalized time k/10, k = 1..10 (docs/PROTOCOL.md section 4, step 7)


@dataclass
class JobData:
    """One job ready to replay: X[k] holds every task's features at checkpoint k."""

    job_id: int
    task_ids: np.ndarray         # (n,)
    latency: np.ndarray          # (n,) seconds
    checkpoints: np.ndarray      # (K,) seconds; checkpoints[0] = t0
    X: np.ndarray                # (K, n, d) normalized features
    tau: float                   # straggler threshold (s)
    feature_names: tuple[str, ...]
    # a protocol other than this pipeline's may fix the initial training set F0 and the
    # evaluated tasks itself (stragglers.prediction.replay.protocol); None = y <= t0 and y > t0
    initial: np.ndarray | None = None      # (n,) bool
    evaluated: np.ndarray | None = None    # (n,) bool
    # the operator's protocol (stragglers.prediction.statistics.threshold, protocol.adapt_job):
    # thresholds[k] = tau_hat(t_k), what a method is given as JobContext.tau at checkpoint k
    # (None = the true tau at every checkpoint, the paper's oracle threshold)
    thresholds: np.ndarray | None = None   # (K,)
    # end of the span the F1-over-time cutoffs divide (None = tau; horizon 'end': the job's end)
    span_end: float | None = None
    # what the scheduler learned from earlier jobs (stragglers.prediction.evaluation.history.JobHistory), given
    # to methods that ask for it (MethodTags.learns_from_earlier_jobs) as JobContext.history
    history: object | None = None
    # the operator's online clock (stragglers/prediction/replay/clock.py): steps[k] = the time from t_k to the
    # next timed decision (known at t_k), what an online method is given as JobContext.step at k
    steps: np.ndarray | None = None        # (K,)
    # the operator's tasks (sql/operator_tasks.sql): finished[i] = task i ends by finishing; the others
    # end otherwise at latency[i] (killed, evicted, failed, lost, or the trace ends), have no latency
    # in the paper's sense and are never stragglers. None = every task finishes (the paper's tasks)
    finished: np.ndarray | None = None     # (n,) bool
    # the operator's wall clock (sql/operator_tasks.sql start_us): start[i] = when task i started after
    # the job's origin (s); checkpoints are then wall times. None = every task at 0 (the task clock)
    start: np.ndarray | None = None        # (n,) seconds
    # the task count known at the job's origin (sql/operator_tasks.sql n_known); None: every task here
    n_known: int | None = None

    def __post_init__(self) -> None:
        K, n, d = self.X.shape
        if self.steps is not None and len(self.steps) != K:
            raise ValueError(f"job {self.job_id}: {len(self.steps)} steps for {K} checkpoints")
        if self.thresholds is not None and len(self.thresholds) != K:
            raise ValueError(f"job {self.job_id}: {len(self.thresholds)} thresholds for {K} checkpoints")
        if self.finished is not None and len(self.finished) != n:
            raise ValueError(f"job {self.job_id}: {len(self.finished)} finished flags for {n} tasks")
        if self.start is not None and len(self.start) != n:
            raise ValueError(f"job {self.job_id}: {len(self.start)} task starts for {n} tasks")
        if len(self.task_ids) != n or len(self.latency) != n or len(self.checkpoints) != K:
            raise ValueError(f"job {self.job_id}: inconsistent shapes X={self.X.shape}, "
                             f"tasks={len(self.task_ids)}, checkpoints={len(self.checkpoints)}")
        if np.any(np.diff(self.checkpoints) <= 0):
            raise ValueError(f"job {self.job_id}: checkpoints are not increasing")

    @property
    def t0(self) -> float:
        return float(self.checkpoints[0])

    @property
    def labels(self) -> np.ndarray:
        straggler = self.latency >= self.tau
        return straggler if self.finished is None else straggler & self.finished

    @property
    def end(self) -> np.ndarray:
        """When each task ends on the clock (s): its start + its latency."""
        return self.latency if self.start is None else self.start + self.latency

    def ended_by(self, t: float) -> np.ndarray:
        """(ended, finished) by time t: a task has ended once it ran its latency, however it ended;
        it has finished if it ended by finishing (what a scheduler sees at t)."""
        ended = self.end <= t
        return ended, ended if self.finished is None else ended & self.finished

    def started_by(self, t: float) -> np.ndarray:
        """The tasks started by time t (every task on the task clock)."""
        return np.ones(len(self.latency), bool) if self.start is None else self.start <= t

    def elapsed(self, t: float) -> np.ndarray:
        """How long each task has run at t, if it runs then (s)."""
        return np.full(len(self.latency), float(t)) if self.start is None else t - self.start


@dataclass
class VariantResult:
    method: str
    flagged_at: np.ndarray       # (n,) seconds, NaN = never flagged
    scored: np.ndarray           # (n,) bool: evaluated tasks
    scores: dict[str, float]     # tp fp fn tn tpr fpr fnr f1 f1_auc median_lead
    f1_over_time: np.ndarray     # (10,)


@dataclass(frozen=True)
class ScoreTrail:
    """The scores a method gave its candidates at each decision of a replay (``Method.sweep_scores``),
    kept sparse: entry e is task ``task[e]`` (an index into the job's tasks) scored at ``times[e]``."""

    times: np.ndarray                    # (m,) seconds, non-decreasing
    task: np.ndarray                     # (m,) int
    scores: dict[str, np.ndarray]        # own variant -> (m,) float (NaN: no score)

    def latest(self, variant: str, decisions, n: int) -> np.ndarray:
        """(len(decisions), n): each task's latest score given at or before each decision (NaN: none
        yet). Reads no score given after a decision."""
        decisions = np.asarray(decisions, dtype=float)
        out = np.full((len(decisions), n), np.nan)
        if variant not in self.scores:
            return out
        values, last = self.scores[variant], np.full(n, np.nan)
        # one block per time a score was given (a task at most once in each), in time order
        cuts = np.flatnonzero(np.diff(self.times)) + 1
        starts, ends = np.r_[0, cuts], np.r_[cuts, len(self.times)]
        b = 0
        for k, t in enumerate(decisions.tolist()):
            while b < len(starts) and self.times[starts[b]] <= t:
                last[self.task[starts[b]:ends[b]]] = values[starts[b]:ends[b]]
                b += 1
            out[k] = last
        return out


class ScoreRecorder:
    """Keeps a replay's scores as it gives them (``ScoreTrail``): one ``add`` per decision."""

    def __init__(self, task_ids) -> None:
        self.index = pd.Index(np.asarray(task_ids))
        self.parts: list[tuple[float, np.ndarray, Mapping[str, np.ndarray]]] = []

    def add(self, t: float, task_ids, scores: Mapping[str, np.ndarray]) -> None:
        if scores and len(task_ids):
            self.parts.append((float(t), self.index.get_indexer(np.asarray(task_ids)),
                               {v: np.asarray(sc, dtype=float) for v, sc in scores.items()}))

    def trail(self) -> ScoreTrail | None:
        if not self.parts:
            return None
        names = list(dict.fromkeys(v for _, _, sc in self.parts for v in sc))
        return ScoreTrail(
            np.concatenate([np.full(len(i), t) for t, i, _ in self.parts]),
            np.concatenate([i for _, i, _ in self.parts]),
            {v: np.concatenate([sc.get(v, np.full(len(i), np.nan)) for _, i, sc in self.parts]) for v in names})


@dataclass
class JobResult:
    job_id: int
    task_ids: np.ndarray
    variants: list[VariantResult]
    fallbacks: list[tuple[int, float, str]] = field(default_factory=list)  # (k, t, reason)
    n_checkpoints: int = 0
    seconds: float = 0.0         # wall time of the replay
    cpu_seconds: float = 0.0     # CPU time of the replay (this thread's process)
    # the scores behind the flags (a replay of every cut, ``Method.score_trail``; None: not kept)
    score_trail: ScoreTrail | None = None
    # the replay's decision times (s; checkpoints[0] = t0): when the method decided what it flags
    checkpoints: np.ndarray | None = None


def job_seed(seed: int, job_id) -> int:
    """A per-job seed that does not depend on job order or worker count."""
    digest = hashlib.sha256(f"{seed}:{job_id}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


DEGENERATE = (CannotFit, *DEGENERATE_DATA_ERRORS)


def replay_job(job: JobData, method: Method, seed: int = 0) -> JobResult:
    started, cpu_started = time.perf_counter(), time.process_time()
    n = len(job.task_ids)
    y = job.latency
    online = job.thresholds is not None
    ctx = JobContext(
        job_id=job.job_id, tau=job.tau, t0=job.t0, task_ids=job.task_ids,
        feature_names=job.feature_names, seed=job_seed(seed, job.job_id), checkpoints=job.checkpoints,
        labels=dict(zip(job.task_ids.tolist(), job.labels.tolist())) if method.tags.reads_labels else None,
        history=job.history if method.tags.learns_from_earlier_jobs else None, n_known=job.n_known,
    )
    if online:
        # the grid's end would reveal tau (it stops before it) or the job's end (horizon 'end'):
        # an online method gets the step only, and tau_hat(t_k) as tau before each fit; on the online
        # clock the step is the time to the next timed decision (the legacy grid's step is cut from tau)
        step = (float(job.steps[0]) if job.steps is not None else
                float(job.checkpoints[1] - job.checkpoints[0]) if len(job.checkpoints) > 1 else None)
        ctx = replace(ctx, tau=float(job.thresholds[0]), checkpoints=None, threshold="online", step=step)
    method.reset(ctx)
    names = method.variant_names
    flagged_at = {v: np.full(n, np.nan) for v in names}
    ended0, finished0 = job.ended_by(job.t0)
    # F0: the tasks finished by t0; scored: the tasks not ended by t0 (running, or not started yet)
    initial = finished0 if job.initial is None else job.initial
    scored = ~ended0 if job.evaluated is None else job.evaluated.copy()
    restrict = method.scored_task_ids(ctx)
    if restrict is not None:
        scored &= np.isin(job.task_ids, restrict)
    fallbacks: list[tuple[int, float, str]] = []

    def sets(k: int, t: float) -> tuple[np.ndarray, np.ndarray, TaskSet, TaskSet]:
        # F_t: finished by t (their latencies); R_t: running at t, with how long each has run (a task
        # that ended otherwise, or has not started, is in neither)
        ended, fin = job.ended_by(t)
        running = ~ended & job.started_by(t)
        return (running, job.elapsed(t), TaskSet(job.task_ids[fin], job.X[k][fin], y[fin]),
                TaskSet(job.task_ids[running], job.X[k][running], None, job.elapsed(t)[running]))

    F0 = TaskSet(job.task_ids[initial], job.X[0][initial], y[initial])
    running0 = ~initial & job.started_by(job.t0) if job.finished is None else ~initial & ~ended0 & job.started_by(job.t0)
    R0 = TaskSet(job.task_ids[running0], job.X[0][running0], None, job.elapsed(job.t0)[running0])
    try:
        method.begin(F0, R0, job.t0)
    except DEGENERATE as e:
        fallbacks.append((0, job.t0, _reason(e)))

    for k in range(1, len(job.checkpoints)):
        t = float(job.checkpoints[k])
        running, elapsed, F, R = sets(k, t)
        open_any = np.zeros(n, bool)
        for v in names:
            open_any |= np.isnan(flagged_at[v])
        cand = running & scored & open_any
        if not cand.any():
            continue
        cand_idx = np.flatnonzero(cand)
        C = TaskSet(job.task_ids[cand_idx], job.X[k][cand_idx], None, elapsed[cand_idx])
        if online:
            method.job = replace(ctx, tau=float(job.thresholds[k]), **(
                {} if job.steps is None else {"step": float(job.steps[k])}))
        try:
            method.fit(F, R, t)
            outs = method.flag(C)
        except DEGENERATE as e:
            fallbacks.append((k, t, _reason(e)))
            continue
        for v in names:
            flags = np.asarray(outs[v])
            if flags.shape != (len(cand_idx),) or flags.dtype != bool:
                raise TypeError(f"{type(method).__name__}.flag returned {flags.dtype} {flags.shape}, "
                                f"expected bool ({len(cand_idx)},) for variant {v}")
            hit = cand_idx[flags & np.isnan(flagged_at[v][cand_idx])]
            flagged_at[v][hit] = t

    labels = job.labels
    span = (job.tau if job.span_end is None else job.span_end) - job.t0
    cutoffs = job.t0 + span * np.arange(1, N_TIME_POINTS + 1) / N_TIME_POINTS
    variants = []
    for v in names:
        fa = flagged_at[v]
        lab, fa_s = labels[scored], fa[scored]
        pred = ~np.isnan(fa_s)
        # a flag at a checkpoint that falls on a cutoff (the 'equal' grid puts checkpoint j on cutoff
        # j) counts from that cutoff on; 1 us (the trace's resolution) absorbs the floating-point
        # difference of the two computations, which made it count at j or j + 1 by chance
        over_time = np.array([job_scores(lab, pred & (fa_s <= c + 1e-6))["f1"] for c in cutoffs])
        scores = job_scores(lab, pred) | {"f1_auc": f1_auc(over_time),
                                          "median_lead": median_lead(lab, fa_s, job.end[scored], job.tau)}
        variants.append(VariantResult(v, fa, scored.copy(), scores, over_time))
    return JobResult(job.job_id, job.task_ids, variants, fallbacks, len(job.checkpoints),
                     time.perf_counter() - started, time.process_time() - cpu_started, method.score_trail(),
                     np.asarray(job.checkpoints, dtype=float))


def _reason(e: BaseException) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return (msg if isinstance(e, CannotFit) else f"{type(e).__name__}: {msg}")[:200]


# ---------------------------------------------------------------- many jobs

MethodFactory = Callable[[], Method]


def results_frames(results: Sequence[JobResult], trace: str) -> dict[str, pd.DataFrame]:
    """predictions, job_metrics, f1_over_time and method_fallbacks rows."""
    pred, metrics, over_time, falls = [], [], [], []
    for r in results:
        for v in r.variants:
            ids = r.task_ids[v.scored]
            pred.append(pd.DataFrame({"trace": trace, "method": v.method, "job_id": r.job_id,
                                      "task_id": ids, "flagged_at_s": v.flagged_at[v.scored]}))
            metrics.append({"trace": trace, "method": v.method, "job_id": r.job_id,
                            **v.scores, "n_scored": int(v.scored.sum()),
                            "n_checkpoints": r.n_checkpoints, "n_fallbacks": len(r.fallbacks),
                            "seconds": r.seconds / len(r.variants)})
            over_time.extend({"trace": trace, "method": v.method, "job_id": r.job_id,
                              "k": i + 1, "f1": float(f)} for i, f in enumerate(v.f1_over_time))
            falls.extend({"trace": trace, "method": v.method, "job_id": r.job_id, "k": k,
                          "checkpoint_s": t, "reason": reason} for k, t, reason in r.fallbacks)
    cols_f = ["trace", "method", "job_id", "k", "checkpoint_s", "reason"]
    return {
        "predictions": pd.concat(pred, ignore_index=True) if pred else pd.DataFrame(),
        "job_metrics": pd.DataFrame(metrics),
        "f1_over_time": pd.DataFrame(over_time),
        "method_fallbacks": pd.DataFrame(falls, columns=cols_f),
    }
