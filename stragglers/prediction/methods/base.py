"""The one interface every straggler-prediction method implements.

Shaped like a PyOD detector: a small class, ``fit`` then ``flag``.

At each checkpoint t of a job's replay (docs/PROTOCOL.md section 4) the simulator
calls ``fit(finished, running, t)`` and then ``flag(candidates)``:

- ``finished``: tasks with latency <= t. Their features are their final ones,
  their ``y`` is their latency (seconds).
- ``running``: every task with latency > t, features as visible at t, ``y`` is
  None; ``elapsed`` how long each has run (on the operator's wall clock the tasks
  started at different times: a rule of elapsed time reads ``elapsed_at(t)``, never t). Methods that use unlabeled data (propensity model, PU learning,
  censoring) train on this set.
- ``candidates``: the running tasks that can still be flagged (not yet flagged
  by this method). ``flag`` returns ``{variant: one bool per candidate row}``: a method's
  own name as the one key, or each variant's name when several share one fit.

A method never sees a running task's latency or label, with one exception by
design: methods tagged ``reads_labels`` (Wrangler, the oracle) get ``job.labels``.

A method class carries what it is: its ``name``, ``family`` and hyperparameters, and its
capabilities declared in ``tags`` (``MethodTags``, like scikit-learn's estimator tags). How it
is shown (display name, band, the paper's numbers) is the reports stage's
(stragglers/reports/page/style.py, stragglers/reports/sections/paper.py).

A method that cannot fit at a checkpoint raises ``CannotFit(reason)``; the
simulator records the reason for (job, checkpoint) and flags nothing there.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np


class CannotFit(Exception):
    """A method cannot fit or score at this checkpoint (the reason is recorded)."""


# Library exceptions that mean "this model cannot be fitted/scored on these data"
# (as opposed to a programming error): recorded as a fallback, not a crash.
DEGENERATE_DATA_ERRORS: tuple[type[BaseException], ...] = (
    ValueError, np.linalg.LinAlgError, FloatingPointError, ZeroDivisionError)


@dataclass(frozen=True)
class TaskSet:
    """Rows of one job at one checkpoint."""

    task_ids: np.ndarray            # (n,) int64
    X: np.ndarray                   # (n, d) float64, normalized features
    y: np.ndarray | None = None     # (n,) latency in seconds, finished tasks only
    # (n,) how long each running task has run (s): on the operator's wall clock the tasks started at
    # different times (stragglers/prediction/replay/clock.py); None = every one has run t, the checkpoint
    elapsed: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.task_ids)

    def take(self, mask: np.ndarray) -> "TaskSet":
        return TaskSet(self.task_ids[mask], self.X[mask], None if self.y is None else self.y[mask],
                       None if self.elapsed is None else self.elapsed[mask])

    def elapsed_at(self, t: float) -> np.ndarray:
        """How long each task has run at checkpoint t (s): what a rule of elapsed time reads."""
        return np.full(len(self), float(t)) if self.elapsed is None else np.asarray(self.elapsed, float)


@dataclass(frozen=True)
class JobContext:
    """What a method may know about a job before its replay starts."""

    job_id: int
    tau: float                      # straggler threshold (s): the true quantile, or tau_hat(t) if online
    t0: float                       # initial checkpoint (s)
    task_ids: np.ndarray            # every task of the job (scored or not)
    feature_names: tuple[str, ...]
    seed: int                       # per-job seed derived from the run seed and job id
    labels: Mapping[int, bool] | None = None   # only for oracle methods (true straggler labels)
    # the replay's checkpoint grid (s), checkpoints[0] = t0: fixed by t0, tau and the step
    # before the replay starts, so knowing it is no look-ahead
    checkpoints: np.ndarray | None = None
    # 'oracle': tau is the job's true threshold for the whole replay (the paper's protocol);
    # 'online': tau is tau_hat(t), re-set by the simulator before each fit (the operator's
    # protocol, stragglers/prediction/statistics/threshold.py); checkpoints is then None and step is given
    threshold: str = "oracle"
    step: float | None = None       # seconds between checkpoints (online only)
    # what the scheduler learned from the jobs that ended before this job's first checkpoint
    # (stragglers/prediction/evaluation/history.py: a prior and a cost-aware threshold); None = no such jobs
    # or a method that does not ask for it
    history: Any = None
    # the task count a scheduler knows at the job's origin (sql/operator_tasks.sql n_known); None: every
    # task of task_ids is known (the paper's protocol, whose task set is fixed)
    n_known: int | None = None

    @property
    def n_tasks(self) -> int:
        """The job's task count as known at its origin (Spark's gate reads it)."""
        return len(self.task_ids) if self.n_known is None else int(self.n_known)


@dataclass(frozen=True)
class HistoryPrior:
    """Within-job effects of the features on log-latency, pooled over earlier jobs (fixed-effects
    least squares: each job's own level removed; stragglers/prediction/evaluation/history.py)."""

    beta: np.ndarray                # (d,) one slope per feature column (0 for a column left out)
    sigma: float                    # residual sd of log-latency within a job
    variance: np.ndarray            # (d,) within-job variance of each feature (the prior's precision)
    n_jobs: int
    n_tasks: int


@dataclass(frozen=True)
class JobHistory:
    """What a scheduler has learned, at a job's first checkpoint, from the jobs that ended before it."""

    earlier_jobs: tuple[int, ...]   # their ids (never a job that ended at or after the cutoff)
    cutoff_us: int                  # the job's start + t0 (trace time, us)
    prior: HistoryPrior | None = None        # None: too few earlier jobs
    # the cost-aware threshold chosen on the earlier jobs, per method name (absent: too few of them)
    thresholds: Mapping[str, float] = field(default_factory=dict)


# ----------------------------------------------------------------------------- the flag threshold's sweep
# The operator's cost curves (stragglers/prediction/verdicts/sweep.py): each method's flag compares a continuous
# score with a cut; one replay scores every cut of its grid (variants ``<name>@<cut>``). The grids, once:
#: a predicted latency over tau (the regressors: flag at >= 1 by default). Log-spaced beyond 3 up to
#: 100: NURD's score is its prediction over tau divided by a propensity weight as small as eps (0.05),
#: so it reaches 20 x the prediction's ratio; a grid that stopped at 3 left NURD no cheap point.
RATIO_GRID: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0,
                                 4.0, 5.0, 6.0, 8.0, 10.0, 12.5, 15.0, 20.0, 30.0, 50.0, 100.0)
#: a probability (survival rules, PU learners, XGBOD: 0.5 by default), to 0.999 at its top
PROBABILITY_GRID: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999)
#: an unsupervised detector's contamination: flag above this top share of the training scores (0.1),
#: down to the top 0.1%
CONTAMINATION_GRID: tuple[float, ...] = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
#: a linear SVM's decision value (Wrangler: 0), log-spaced past 1
DECISION_GRID: tuple[float, ...] = (-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def sweep_labels(name: str, grid) -> tuple[str, ...]:
    """The variant names of a sweep over ``grid``: ``<name>@<cut>``."""
    return tuple(f"{name}@{g:g}" for g in grid)


def cut_flags(name: str, score: np.ndarray, grid, strict: bool) -> dict[str, np.ndarray]:
    """Flags of ``score`` at every cut of ``grid`` (``score > cut`` if strict, else ``>=``)."""
    score = np.asarray(score, dtype=float)
    return {label: (score > g if strict else score >= g) for label, g in zip(sweep_labels(name, grid), grid)}


@dataclass(frozen=True)
class MethodTags:
    """What a method needs and is, declared once per class (like scikit-learn's estimator tags and
    PyOD's detector flags); the simulator and the evaluation read them, never the class's name."""

    # sees the true straggler labels (Wrangler, the oracle), by design: never a free rule
    reads_labels: bool = False
    # learns from earlier jobs (a prior, a cost-aware threshold): the evaluation gives each job the
    # jobs that ended before its first checkpoint (stragglers/prediction/evaluation/history.py)
    learns_from_earlier_jobs: bool = False
    # a rule of elapsed time alone, no model of the features (the free rules and the oracle): the
    # reference the learned methods are compared with
    reference_rule: bool = False


def variant_names(cls: type["Method"]) -> tuple[str, ...]:
    """The variants a method class computes (its name alone unless a family)."""
    return cls.variants or (cls.name,)


class Method:
    """Base class. Subclasses set ``name`` and ``family`` (and ``tags`` where a default does not
    hold) and implement ``fit`` and ``flag``.

    Hyperparameters are the arguments of the subclass's ``__init__`` (explicit,
    with defaults; an unknown one is a TypeError), stored as attributes of the
    same name, like scikit-learn estimators and PyOD detectors.
    """

    name: ClassVar[str] = "method"
    # the kind of method (the module's: "rules", "outliers", "pu", "survival", "wrangler", "nurd")
    family: ClassVar[str] = ""
    tags: ClassVar[MethodTags] = MethodTags()
    # hyperparameters of the authors' released code where they differ from ours
    # (applied by the protocol setting baseline_params="authors", docs/EVALUATION.md)
    authors_params: ClassVar[Mapping[str, Any]] = {}
    # hyperparameters taken from the evaluation settings (EvaluationSettings fields of the same name)
    settings_params: ClassVar[tuple[str, ...]] = ()
    # fixed choices recorded with the results beside the hyperparameters (not arguments)
    notes: ClassVar[Mapping[str, Any]] = {}
    # Several methods can share one fit (NURD, NURD-NC, GBTR). Such a family
    # lists its variants; ``flag`` returns one entry per variant.
    variants: ClassVar[tuple[str, ...] | None] = None
    # the cuts of the flag-threshold sweep on ``sweep_scores`` (None: no sweep, or one the method
    # declares itself) and whether a cut flags a score strictly above it (else at or above it)
    sweep_grid: ClassVar[tuple[float, ...] | None] = None
    sweep_strict: ClassVar[bool] = False

    def __init__(self) -> None:
        self.job: JobContext | None = None

    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        return tuple(p for p in inspect.signature(cls.__init__).parameters if p != "self")

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters, by name, as passed to ``__init__``."""
        return {p: getattr(self, p) for p in self.param_names()}

    def reset(self, job: JobContext) -> None:
        """Called once per job before its first checkpoint."""
        self.job = job

    def scored_task_ids(self, job: JobContext) -> np.ndarray | None:
        """Task ids this method is evaluated on (None = all running at t0)."""
        return None

    def begin(self, finished: TaskSet, running: TaskSet, t0: float) -> None:
        """Called once at the initial checkpoint t0 (first training set F0, R0).

        Nothing is flagged at t0 (Algorithm 1 starts scoring at t1); NURD
        computes its calibration term here.
        """

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        raise NotImplementedError

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        """After ``fit``: {variant: the candidates' flags (bool, one per row)} for every variant."""
        raise NotImplementedError

    def hyperparameters(self) -> dict[str, Any]:
        """Every hyperparameter the method uses, recorded with its results."""
        return self.get_params() | dict(self.notes)

    def score_trail(self):
        """After a replay: the scores it kept (``simulate.ScoreTrail``), or None (a method alone keeps
        none; a replay of every cut does, stragglers/prediction/verdicts/sweep.py)."""
        return None

    @property
    def variant_names(self) -> tuple[str, ...]:
        return self.variants or (self.name,)

    def sweep_points(self) -> tuple[str, ...]:
        """The variants of this method's flag-threshold sweep (``sweep_labels``: each own variant's
        cuts of ``sweep_grid``); () = no sweep (the method is one point: flag_all, the oracle, a rule
        whose point lies on another's sweep)."""
        if self.sweep_grid is None:
            return ()
        return tuple(p for v in self.variant_names for p in sweep_labels(v, self.sweep_grid))

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        """After ``fit``: per own variant, the candidates' score, one per row, higher = more a
        straggler (NaN or -inf: no score). The sweep's cuts compare it (``sweep_flags``), and a
        scheduler with a budget copies the tasks past a cut in its order, highest first
        (stragglers/prediction/verdicts/sweep.py ``policies_of``: the engine's ranking). {} = the method gives no score. A method
        whose score depends on which tasks are candidates (transductive detectors) scores the ones
        given."""
        return {}

    def sweep_flags(self, candidates: TaskSet, scores: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The candidates' flags at every point of ``sweep_points``, from ``scores`` (what
        ``sweep_scores`` gave for them): each variant's score against each cut of ``sweep_grid``
        (strictly above it if ``sweep_strict``). A method whose cut is not a plain cut of its score
        (Spark's rule, the PyOD detectors' contamination) overrides it."""
        if self.sweep_grid is None:
            return {}
        return {k: f for v, sc in scores.items() for k, f in cut_flags(v, sc, self.sweep_grid, self.sweep_strict).items()}
