"""The PyOD adapter: one base class turns a PyOD detector into a method (outliers.py lists them).

At each checkpoint a detector is fitted on the finished tasks' features and
flags the candidates that the fitted detector labels outliers, exactly PyOD's
``predict``: ``decision_function(X) > threshold_``, where ``threshold_`` is the
(1 - contamination) quantile of the training scores; its flag-threshold sweep
moves the contamination over the same scores.

Three PyOD detectors score new data *transductively*: SOS, COF and SOD compute
``decision_function(X)`` from X alone (the candidates among themselves), and
only the threshold comes from the training scores. That is the library's
behaviour and is kept as is; it means they need enough candidates too.

Quadratic detectors (ABOD, LOF, COF, SOD, SOS, LSCP, OCSVM, XGBOD) take
``max_train`` (default 2000): a training set larger than that is subsampled
with the job seed. The transductive ones (SOS, COF, SOD) are quadratic in the
candidates as well: more than ``max_train`` candidates are scored in seeded
random chunks of at most ``max_train`` (each chunk among itself).

Preconditions checked explicitly (``CannotFit`` otherwise): neighbour-based
detectors need more training rows than ``n_neighbors`` (ABOD, KNN, LOF, COF,
SOD; LSCP: more than its largest LOF n_neighbors and than its local region),
CBLOF needs at least ``n_clusters`` rows, transductive detectors need more
candidates than ``n_neighbors`` (COF, SOD) or than the perplexity (SOS),
every detector needs >= 2 training rows and finite training scores, and
XGBOD needs both classes. Library exceptions (ValueError, LinAlgError, ...)
become ``CannotFit`` with the message.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pyod

from stragglers.prediction.methods._common import (
    cannot_fit_on_error,
    int_seed,
    job_rng,
    nonconstant_columns,
    quiet,
    require_finite,
    subsample,
)
from stragglers.prediction.methods.base import CONTAMINATION_GRID, CannotFit, Method, TaskSet, sweep_labels

CONTAMINATION = 0.1
DEFAULT_MAX_TRAIN = 2000


class OutlierDetector(Method):
    """Generic PyOD detector: fit on finished X, flag candidates predicted outliers.

    Subclasses set ``name``, ``pyod_class`` (the PyOD class), their library
    parameters as ``__init__`` arguments (``contamination`` first,
    ``max_train`` last for quadratic detectors) and the precondition hooks.
    """

    name: ClassVar[str] = "outlier"
    family = "outliers"
    pyod_class: ClassVar[type]
    seeded: ClassVar[bool] = False          # library takes random_state
    drop_constant: ClassVar[bool] = False   # drop constant training columns
    transductive: ClassVar[bool] = False    # scores candidates among themselves

    def __init__(self) -> None:
        super().__init__()
        self.det_: Any = None
        self.cols_: np.ndarray | None = None

    # -- hooks ---------------------------------------------------------------
    def _library_params(self) -> dict[str, Any]:
        p = {k: v for k, v in self.get_params().items() if k != "max_train"}
        if self.seeded:
            p["random_state"] = int_seed(self.job.seed) if self.job is not None else 0
        return p

    def _make(self) -> Any:
        return self.pyod_class(**self._library_params())

    def _min_train(self) -> int:
        """Smallest number of training rows the detector can use."""
        k = getattr(self, "n_neighbors", None)
        return 2 if k is None else max(2, int(k) + 1)

    def _min_candidates(self) -> int:
        """Smallest number of candidates a transductive detector can score."""
        return self._min_train() if self.transductive else 1

    # -- Method interface --------------------------------------------------------
    def hyperparameters(self) -> dict[str, Any]:
        hp = dict(self.get_params())
        hp["detector"] = f"{self.pyod_class.__module__}.{self.pyod_class.__name__}"
        hp["pyod_version"] = getattr(pyod, "__version__", "?")
        if self.seeded:
            hp["random_state"] = "job seed"
        hp["drop_constant_columns"] = self.drop_constant
        hp["scores_candidates_transductively"] = self.transductive
        return hp

    def _training_rows(self, finished: TaskSet, running: TaskSet) -> tuple[np.ndarray, np.ndarray | None]:
        return finished.X, None

    def _subsample(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        return subsample(len(X), getattr(self, "max_train", None), job_rng(self.job.seed, 11))

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.det_ = None
        X, y = self._training_rows(finished, running)
        idx = self._subsample(X, y)
        X = np.asarray(X[idx], dtype=float)
        y = None if y is None else y[idx]
        if y is not None and len(np.unique(y)) < 2:
            raise CannotFit(f"{self.name}: a single class in the training rows")
        need = self._min_train()
        if len(X) < need:
            raise CannotFit(f"{self.name}: {len(X)} training rows, needs >= {need}")
        self.cols_ = nonconstant_columns(X) if self.drop_constant else np.ones(X.shape[1], bool)
        if not self.cols_.any():
            raise CannotFit(f"{self.name}: every feature is constant over the training rows")
        X = X[:, self.cols_]
        det = self._make()
        with cannot_fit_on_error(f"{self.name} fit"), quiet():
            if y is None:
                det.fit(X)
            else:
                det.fit(X, y)
        require_finite(det.decision_scores_, f"{self.name} training scores")
        self.det_ = det

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.det_ is None:
            raise CannotFit(f"{self.name}: not fitted")
        n = len(candidates)
        if n == 0:
            return {self.name: np.zeros(0, dtype=bool)}
        if n < self._min_candidates():
            raise CannotFit(
                f"{self.name}: scores candidates among themselves; {n} candidates, "
                f"needs >= {self._min_candidates()}"
            )
        return {self.name: self._by_chunk(candidates, self._predict, bool)}

    def _by_chunk(self, candidates: TaskSet, score, dtype) -> np.ndarray:
        n = len(candidates)
        Xc = np.asarray(candidates.X, dtype=float)[:, self.cols_]
        with cannot_fit_on_error(f"{self.name} score"), quiet():
            max_train = getattr(self, "max_train", None)
            if not self.transductive or max_train is None or n <= max_train:
                return score(Xc)
            # quadratic in the candidates too: score seeded random chunks of
            # <= max_train candidates (each chunk among itself)
            n_chunks = int(np.ceil(n / max_train))
            perm = job_rng(self.job.seed, 12).permutation(n)
            out = np.zeros(n, dtype=dtype)
            for part in np.array_split(perm, n_chunks):
                out[part] = score(Xc[part])
            return out

    def _scores(self, Xc: np.ndarray) -> np.ndarray:
        return require_finite(self.det_.decision_function(Xc), f"{self.name} scores")

    def _predict(self, Xc: np.ndarray) -> np.ndarray:
        return np.asarray(self._scores(Xc) > self.det_.threshold_, dtype=bool)  # == pyod predict

    sweep_grid = CONTAMINATION_GRID

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        # the detector's decision score (PyOD's: higher, more an outlier)
        if self.det_ is None or len(candidates) < max(1, self._min_candidates()):
            return {}
        return {self.name: self._by_chunk(candidates, self._scores, float)}

    def sweep_flags(self, candidates: TaskSet, scores) -> dict[str, np.ndarray]:
        # PyOD's threshold_ is the (1 - contamination) percentile of the training scores; the sweep
        # moves the contamination (the same scores, so the default's point is the method's flags)
        if self.name not in scores:
            return {}
        train = self.det_.decision_scores_
        return {label: scores[self.name] > np.percentile(train, 100 * (1 - c))
                for label, c in zip(sweep_labels(self.name, CONTAMINATION_GRID), CONTAMINATION_GRID)}
