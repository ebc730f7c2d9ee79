"""The 14 PyOD outlier detectors of the paper's Table 3 (PROTOCOL.md section 5).

At each checkpoint a detector is fitted on the finished tasks' features
(contamination 0.1) and flags the candidates that the fitted detector labels
outliers, exactly PyOD's ``predict``: ``decision_function(X) > threshold_``,
where ``threshold_`` is the (1 - contamination) quantile of the training
scores. XGBOD is supervised: it is trained on finished = 0 / running = 1 and
flags the candidates it predicts 1 (decision, not in the paper).

Library defaults are kept except: contamination 0.1, ``random_state`` from the
job seed, LSCP's detector list (LOF with n_neighbors 5, 10, 15, 20), and, for
MCD and PCA only, the columns that are constant over the training rows are
dropped (a constant column makes the covariance singular; on min-max
normalised Google features EV/FL are often all 0).

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
from stragglers.prediction.methods.base import CannotFit, Method, TaskSet

CONTAMINATION = 0.1
DEFAULT_MAX_TRAIN = 2000


class OutlierDetector(Method):
    """Generic PyOD detector: fit on finished X, flag candidates predicted outliers.

    Subclasses set ``name``, ``pyod_class`` (the PyOD class, imported lazily
    by ``_make``), ``defaults`` (library parameters that are fixed or
    recorded) and the precondition hooks.
    """

    name: ClassVar[str] = "outlier"
    pyod_class: ClassVar[str] = ""          # e.g. "pyod.models.abod.ABOD"
    defaults: ClassVar[dict[str, Any]] = {}
    seeded: ClassVar[bool] = False          # library takes random_state
    quadratic: ClassVar[bool] = False       # gets max_train
    drop_constant: ClassVar[bool] = False   # drop constant training columns
    transductive: ClassVar[bool] = False    # scores candidates among themselves

    def __init__(self, **params: Any) -> None:
        p: dict[str, Any] = {"contamination": CONTAMINATION, **self.defaults}
        if self.quadratic:
            p["max_train"] = DEFAULT_MAX_TRAIN
        p.update(params)
        super().__init__(**p)
        self.det_: Any = None
        self.cols_: np.ndarray | None = None

    # -- hooks ---------------------------------------------------------------
    def _library_params(self) -> dict[str, Any]:
        p = {k: v for k, v in self.params_.items() if k != "max_train"}
        if self.seeded:
            p["random_state"] = int_seed(self.job.seed) if self.job is not None else 0
        return p

    def _make(self) -> Any:
        module, cls = self.pyod_class.rsplit(".", 1)
        mod = __import__(module, fromlist=[cls])
        return getattr(mod, cls)(**self._library_params())

    def _min_train(self) -> int:
        """Smallest number of training rows the detector can use."""
        k = self.params_.get("n_neighbors")
        return 2 if k is None else max(2, int(k) + 1)

    def _min_candidates(self) -> int:
        """Smallest number of candidates a transductive detector can score."""
        return self._min_train() if self.transductive else 1

    # -- Method interface --------------------------------------------------------
    def hyperparameters(self) -> dict[str, Any]:
        hp = dict(self.params_)
        hp["detector"] = self.pyod_class
        hp["pyod_version"] = getattr(pyod, "__version__", "?")
        if self.seeded:
            hp["random_state"] = "job seed"
        hp["drop_constant_columns"] = self.drop_constant
        hp["scores_candidates_transductively"] = self.transductive
        return hp

    def _training_rows(self, finished: TaskSet, running: TaskSet) -> tuple[np.ndarray, np.ndarray | None]:
        return finished.X, None

    def _subsample(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        return subsample(len(X), self.params_.get("max_train"), job_rng(self.job.seed, 11))

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

    def flag(self, candidates: TaskSet) -> np.ndarray:
        if self.det_ is None:
            raise CannotFit(f"{self.name}: not fitted")
        n = len(candidates)
        if n == 0:
            return np.zeros(0, dtype=bool)
        if n < self._min_candidates():
            raise CannotFit(
                f"{self.name}: scores candidates among themselves; {n} candidates, "
                f"needs >= {self._min_candidates()}"
            )
        Xc = np.asarray(candidates.X, dtype=float)[:, self.cols_]
        with cannot_fit_on_error(f"{self.name} score"), quiet():
            if not self.transductive or self.params_.get("max_train") is None or n <= self.params_["max_train"]:
                return self._predict(Xc)
            # quadratic in the candidates too: score seeded random chunks of
            # <= max_train candidates (each chunk among itself)
            n_chunks = int(np.ceil(n / self.params_["max_train"]))
            perm = job_rng(self.job.seed, 12).permutation(n)
            out = np.zeros(n, dtype=bool)
            for part in np.array_split(perm, n_chunks):
                out[part] = self._predict(Xc[part])
            return out

    def _predict(self, Xc: np.ndarray) -> np.ndarray:
        scores = require_finite(self.det_.decision_function(Xc), f"{self.name} scores")
        return np.asarray(scores > self.det_.threshold_, dtype=bool)  # == pyod predict


class ABODMethod(OutlierDetector):
    name = "abod"
    pyod_class = "pyod.models.abod.ABOD"
    defaults = {"n_neighbors": 5, "method": "fast"}
    quadratic = True


class CBLOFMethod(OutlierDetector):
    name = "cblof"
    pyod_class = "pyod.models.cblof.CBLOF"
    defaults = {"n_clusters": 8, "alpha": 0.9, "beta": 5, "use_weights": False}
    seeded = True

    def _min_train(self) -> int:
        return int(self.params_["n_clusters"]) + 1


class HBOSMethod(OutlierDetector):
    name = "hbos"
    pyod_class = "pyod.models.hbos.HBOS"
    defaults = {"n_bins": 10, "alpha": 0.1, "tol": 0.5}


class IForestMethod(OutlierDetector):
    name = "iforest"
    pyod_class = "pyod.models.iforest.IForest"
    defaults = {"n_estimators": 100, "max_samples": "auto", "max_features": 1.0}
    seeded = True


class KNNMethod(OutlierDetector):
    name = "knn"
    pyod_class = "pyod.models.knn.KNN"
    defaults = {"n_neighbors": 5, "method": "largest"}


class LOFMethod(OutlierDetector):
    name = "lof"
    pyod_class = "pyod.models.lof.LOF"
    defaults = {"n_neighbors": 20, "novelty": True}
    quadratic = True


class MCDMethod(OutlierDetector):
    name = "mcd"
    pyod_class = "pyod.models.mcd.MCD"
    defaults = {"support_fraction": None, "assume_centered": False}
    seeded = True
    drop_constant = True

    def _min_train(self) -> int:
        # MinCovDet needs more rows than (kept) features for a regular covariance;
        # the column count is only known at fit, so fit checks the rank itself.
        return 3

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        d = int(nonconstant_columns(finished.X).sum()) if len(finished) else 0
        if len(finished) <= d:
            raise CannotFit(f"mcd: {len(finished)} training rows <= {d} non-constant features (singular covariance)")
        super().fit(finished, running, t)


class OCSVMMethod(OutlierDetector):
    name = "ocsvm"
    pyod_class = "pyod.models.ocsvm.OCSVM"
    defaults = {"kernel": "rbf", "gamma": "auto", "nu": 0.5}
    quadratic = True


class PCAMethod(OutlierDetector):
    name = "pca"
    pyod_class = "pyod.models.pca.PCA"
    defaults = {"n_components": None, "weighted": True, "standardization": True}
    seeded = True
    drop_constant = True


class SOSMethod(OutlierDetector):
    name = "sos"
    pyod_class = "pyod.models.sos.SOS"
    defaults = {"perplexity": 4.5, "metric": "euclidean"}
    quadratic = True
    transductive = True

    def _min_train(self) -> int:
        # the affinity of each point is calibrated to the perplexity over the
        # other n - 1 points: needs n - 1 > perplexity
        return int(np.floor(self.params_["perplexity"])) + 2


class LSCPMethod(OutlierDetector):
    name = "lscp"
    pyod_class = "pyod.models.lscp.LSCP"
    defaults = {"lof_n_neighbors": (5, 10, 15, 20), "local_region_size": 30}
    seeded = True
    quadratic = True

    def _make(self) -> Any:
        from pyod.models.lof import LOF
        from pyod.models.lscp import LSCP

        p = self._library_params()
        lofs = [LOF(n_neighbors=int(k), contamination=p["contamination"]) for k in p["lof_n_neighbors"]]
        return LSCP(
            lofs,
            local_region_size=p["local_region_size"],
            contamination=p["contamination"],
            random_state=p["random_state"],
        )

    def _min_train(self) -> int:
        return max(max(self.params_["lof_n_neighbors"]), self.params_["local_region_size"]) + 1


class COFMethod(OutlierDetector):
    name = "cof"
    pyod_class = "pyod.models.cof.COF"
    defaults = {"n_neighbors": 20, "method": "fast"}
    quadratic = True
    transductive = True


class SODMethod(OutlierDetector):
    name = "sod"
    pyod_class = "pyod.models.sod.SOD"
    defaults = {"n_neighbors": 20, "ref_set": 10, "alpha": 0.8}
    quadratic = True
    transductive = True


class XGBODMethod(OutlierDetector):
    """XGBOD, supervised: finished = 0, running = 1; flags candidates predicted 1.

    Its training set is finished plus running (subsampled to ``max_train``
    rows when larger, stratified: each class keeps its share); its default detector pool (KNN/LOF with
    k < n, HBOS, OCSVM, IForest) is PyOD's.
    """

    name = "xgbod"
    pyod_class = "pyod.models.xgbod.XGBOD"
    defaults = {"max_depth": 3, "learning_rate": 0.1, "n_estimators": 100, "n_jobs": 1}
    seeded = True
    quadratic = True

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.params_["contamination"] = None   # not used (supervised); recorded as such

    def _training_rows(self, finished: TaskSet, running: TaskSet) -> tuple[np.ndarray, np.ndarray | None]:
        X = np.vstack([finished.X, running.X])
        y = np.r_[np.zeros(len(finished), int), np.ones(len(running), int)]
        return X, y

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        if len(finished) == 0 or len(running) == 0:
            raise CannotFit("xgbod: needs finished and running tasks (two classes)")
        super().fit(finished, running, t)

    def _subsample(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        """Stratified: each class keeps its share of max_train (at least one row)."""
        cap = self.params_.get("max_train")
        if cap is None or len(X) <= cap:
            return np.arange(len(X))
        rng = job_rng(self.job.seed, 11)
        parts = []
        for c in (0, 1):
            rows = np.flatnonzero(y == c)
            k = max(1, int(round(cap * len(rows) / len(y))))
            parts.append(rows[subsample(len(rows), k, rng)])
        return np.sort(np.concatenate(parts))

    def _library_params(self) -> dict[str, Any]:
        p = super()._library_params()
        p.pop("contamination")      # supervised: XGBOD has no contamination
        return p

    def _min_train(self) -> int:
        return 3

    def _predict(self, Xc: np.ndarray) -> np.ndarray:
        return np.asarray(self.det_.predict(Xc), dtype=int) == 1
