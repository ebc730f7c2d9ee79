"""Every method at every budget: each point of a method's sweep as a policy of the replay engine
(docs/EVALUATION.md "Cost curves").

Every method is a ranking: at each decision it gives each running task a score, higher for a
likelier straggler (``Method.sweep_scores``: a predicted latency over tau_hat, a probability, an
outlier score...; the KM rule: P(latency > tau_hat | elapsed); wait-for-tau: (elapsed + step) /
tau_hat), and its sweep's points are cuts of that score (``Method.sweep_flags``). Under the
operator's protocol one replay per job scores every cut (``SweepGrid``): the method's own variants
are replayed exactly as alone, and the sweep's variants ``<name>@<cut>`` beside them; the replay
keeps the scores (``simulate.ScoreTrail``). ``policies_of`` turns every point into a policy of the
engine (stragglers/prediction/engine), ranked by the method's score as given by each decision;
Spark's rule is the engine's own, for every setting of its grid; ``job_rows`` runs them all under
every cap (``CAPS``: each budget, Hadoop's caps, none) and ``SweepCollector`` keeps the rows (tables
``capped_outcomes`` and, uncapped, ``sweep_outcomes``). The curves, the tuning on earlier jobs and
the budget tables are stragglers/prediction/verdicts/tuning.py and budgets.py.

A method whose score depends on the candidate set (SOS, COF, SOD score candidates among
themselves) scores the sweep on the tasks that some cut has not flagged yet: its own variant is
replayed exactly, its sweep's points are what that scoring gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd


from stragglers.prediction.engine.caps import Budget, Cap, HadoopCaps, Uncapped
from stragglers.prediction.engine.job import CopyJob
from stragglers.prediction.engine.policies import (
    DEFAULT_POINT, ORACLE, SPARK_METHODS, Policy, from_flags, oracle, spark_rule_policies,
)
from stragglers.prediction.engine.replay import OUTCOME_COLUMNS, outcome_rows
from stragglers.prediction.methods.base import DEGENERATE_DATA_ERRORS, CannotFit, Method, TaskSet
from stragglers.prediction.replay.simulate import JobResult, ScoreRecorder
from stragglers.prediction.verdicts.tuning import BUDGETS


SWEEP_COLUMNS = ["trace", "method", "point", "job_id", "jct_reduction", "extra_machine_share", "n_flagged"]
#: The caps every point is scored under through the engine: each budget, Hadoop's caps, and none
#: (a copy per flag: the cost curves).
UNCAPPED = Uncapped()
CAPS: tuple[Cap, ...] = tuple(Budget(b) for b in BUDGETS) + (HadoopCaps(), UNCAPPED)
CAPPED_COLUMNS = OUTCOME_COLUMNS

_ERRORS = (CannotFit, *DEGENERATE_DATA_ERRORS)


def split_variant(name: str) -> tuple[str, str]:
    """(method, point) of a replay variant: ``nurd@1.25`` -> (nurd, 1.25); ``nurd`` -> (nurd, default)."""
    method, _, point = name.partition("@")
    return method, point or DEFAULT_POINT


# ----------------------------------------------------------------------------- one replay, every cut

class SweepGrid(Method):
    """``factory``'s method replayed once for its own variants and every point of its sweep.

    The own variants see exactly the candidates they would alone (the tasks none of them has
    flagged yet), so their flags are the method's; a checkpoint where the method cannot fit or
    score is a fallback only where it would be one alone (some own candidate left)."""

    def __init__(self, factory: Callable[[], Method]) -> None:
        super().__init__()
        self.inner = factory()
        self.own = self.inner.variant_names
        self.points = self.inner.sweep_points()
        self.variants = self.own + self.points
        self.tags = self.inner.tags
        self.name = self.inner.name

    def reset(self, job) -> None:
        super().reset(job)
        self.inner.reset(job)
        self.flagged_ = {v: set() for v in self.own}
        self.scores_ = ScoreRecorder(job.task_ids)

    def scored_task_ids(self, job):
        return self.inner.scored_task_ids(job)

    def begin(self, finished: TaskSet, running: TaskSet, t0: float) -> None:
        self.inner.begin(finished, running, t0)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.inner.job = self.job          # tau_hat(t) under the online threshold
        self.error_, self.t_ = None, t
        try:
            self.inner.fit(finished, running, t)
        except _ERRORS as e:
            self.error_ = e

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        ids = candidates.task_ids.tolist()
        own_open = np.array([any(i not in self.flagged_[v] for v in self.own) for i in ids], dtype=bool)
        out = {v: np.zeros(len(ids), dtype=bool) for v in self.variants}
        if own_open.any():
            if self.error_ is not None:
                raise self.error_            # a fallback, as alone
            got = self.inner.flag(candidates.take(own_open))
            for v in self.own:
                out[v][own_open] = np.asarray(got[v], dtype=bool)
                self.flagged_[v].update(np.asarray(ids)[out[v]].tolist())
        if self.error_ is None:
            try:
                scores = self.inner.sweep_scores(candidates)
                swept = self.inner.sweep_flags(candidates, scores) if self.points else {}
            except _ERRORS:
                scores, swept = {}, {}       # the sweep loses this checkpoint, the method's flags stand
            self.scores_.add(self.t_, candidates.task_ids, scores)
            for p in self.points:
                if p in swept:
                    out[p] = np.asarray(swept[p], dtype=bool)
        return out

    def hyperparameters(self) -> dict:
        return self.inner.hyperparameters()

    def score_trail(self):
        return self.scores_.trail()


# ----------------------------------------------------------------------------- per job, each point's outcome

def policies_of(result: JobResult, job: CopyJob) -> list[Policy]:
    """Every point of ``result``'s replay as a policy of the engine (stragglers/prediction/engine):

    - the oracle's replay gives the oracle (its order and its knowing the copies are the engine's);
    - Spark's rule is the engine's own (``spark_rule``: at the job's checks, with Spark's gate): its
      own setting (point ``default``) and every setting of its grid (``spark_rule.GRID``;
      ``spark4_speculation``: its own only);
    - any other method: each variant's flags (its own, and every cut of its sweep) ranked by the
      method's score as given by each decision (``result.score_trail``; a replay of several methods,
      the NURD family, ranks each by its own), or, where the replay kept no score, by how many of its
      cuts had flagged the task by then (``from_flags``)."""
    names = [split_variant(v.method) for v in result.variants]
    method = names[0][0]
    if method == ORACLE:
        return [oracle(job)]
    if method in SPARK_METHODS:
        return spark_rule_policies(job, method)
    pos = pd.Index(job.task_ids).get_indexer(result.task_ids)
    if (pos < 0).any():
        raise LookupError(f"job {result.job_id}: the replay has tasks the engine's job does not")
    F = np.full((len(result.variants), len(job.task_ids)), np.nan)
    F[:, pos] = np.stack([v.flagged_at for v in result.variants]).astype(float)
    with np.errstate(invalid="ignore"):
        F[F >= job.end[None, :]] = np.nan            # a flag after the task ended asks for no copy
    decisions = result.checkpoints[1:] if result.checkpoints is not None else np.unique(F[~np.isnan(F)])
    trail = result.score_trail
    out = []
    for m in dict.fromkeys(mm for mm, _ in names):
        own = [i for i, (mm, _) in enumerate(names) if mm == m]
        latest = passed = None
        if trail is not None and m in trail.scores:
            latest = np.full((len(decisions), len(job.task_ids)), np.nan)
            latest[:, pos] = trail.latest(m, decisions, len(result.task_ids))
        else:
            with np.errstate(invalid="ignore"):
                passed = np.stack([(F[own] <= t).sum(axis=0) for t in decisions.tolist()]) if len(decisions) else None
        out += [from_flags(m, names[i][1], F[i], decisions, latest, passed) for i in own]
    return out


def job_rows(trace: str, result: JobResult, job: CopyJob, caps: Sequence[Cap] = CAPS) -> pd.DataFrame:
    """Every point of ``result`` under every cap on this job of ``trace`` through the engine
    (``CAPPED_COLUMNS``)."""
    if trace != job.trace:
        raise ValueError(f"job {job.job_id} is of trace {job.trace!r}, not {trace!r}")
    if not len(job.task_ids) or not np.isfinite(job.latency).all() or float(job.latency.max()) <= 0:
        return pd.DataFrame(columns=CAPPED_COLUMNS)
    return outcome_rows(job, policies_of(result, job), caps)


@dataclass
class SweepCollector:
    """Takes each job's sweep replay, runs every point through the engine under every cap, and hands
    back the method's own variants (what the result tables store)."""

    trace: str
    jobs: Mapping[int, CopyJob]               # job -> the engine's job (engine.jobs.copy_jobs)
    parts: list[pd.DataFrame] = field(default_factory=list)

    def score(self, result: JobResult) -> None:
        """Every point of ``result`` under every cap, kept."""
        job = self.jobs.get(int(result.job_id))
        if job is None:
            raise LookupError(f"job {result.job_id} of trace {self.trace} has no tasks for the engine "
                              f"(operator_tasks): the replay and the engine read different jobs")
        self.parts.append(job_rows(self.trace, result, job))

    def add(self, result: JobResult, own: Sequence[str] | None = None) -> JobResult:
        """``score``, then the result with the method's own variants only (what the tables store)."""
        self.score(result)
        if own is None:
            own = [v.method for v in result.variants if "@" not in v.method]
        return replace(result, variants=[v for v in result.variants if v.method in own], score_trail=None)

    def capped_frame(self) -> pd.DataFrame:
        """Every point under every cap (table ``capped_outcomes``)."""
        parts = [p for p in self.parts if len(p)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CAPPED_COLUMNS)

    def frame(self) -> pd.DataFrame:
        """Every point with a copy per flag, uncapped (table ``sweep_outcomes``: the cost curves)."""
        c = self.capped_frame()
        return c[c["cap"] == UNCAPPED.label][SWEEP_COLUMNS].reset_index(drop=True)
