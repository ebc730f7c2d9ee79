"""The 14 PyOD outlier detectors of the paper's Table 3 (docs/PROTOCOL.md section 5), each a
subclass of the PyOD adapter (pyod_adapter.py): its library parameters and preconditions.

Fitted on the finished tasks' features (contamination 0.1), a detector flags the candidates it
labels outliers. XGBOD is supervised: it is trained on finished = 0 / running = 1 and
flags the candidates it predicts 1 (decision, not in the paper).

Library defaults are kept except: contamination 0.1, ``random_state`` from the
job seed, LSCP's detector list (LOF with n_neighbors 5, 10, 15, 20), and, for
MCD and PCA only, the columns that are constant over the training rows are
dropped (a constant column makes the covariance singular; on min-max
normalised Google features EV/FL are often all 0). SOS runs PyOD's algorithm with its
per-row perplexity search compiled (``BatchedSOS``, bit-identical scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from pyod.models.abod import ABOD
from pyod.models.cblof import CBLOF
from pyod.models.cof import COF
from pyod.models.hbos import HBOS
from pyod.models.iforest import IForest
from pyod.models.knn import KNN
from pyod.models.lof import LOF
from pyod.models.lscp import LSCP
from pyod.models.mcd import MCD
from pyod.models.ocsvm import OCSVM
from pyod.models.pca import PCA
from pyod.models.sod import SOD
from pyod.models.sos import SOS, _get_perplexity
from pyod.models.xgbod import XGBOD

from stragglers.prediction.methods._common import job_rng, nonconstant_columns, subsample
from stragglers.prediction.methods.base import PROBABILITY_GRID, CannotFit, Method, TaskSet
from stragglers.prediction.methods.pyod_adapter import CONTAMINATION, DEFAULT_MAX_TRAIN, OutlierDetector


class ABODMethod(OutlierDetector):
    name = "abod"
    pyod_class = ABOD

    def __init__(self, contamination: float = CONTAMINATION, n_neighbors: int = 5, method: str = "fast",
                 max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.contamination, self.n_neighbors, self.method, self.max_train = contamination, n_neighbors, method, max_train


class CBLOFMethod(OutlierDetector):
    name = "cblof"
    pyod_class = CBLOF
    seeded = True

    def __init__(self, contamination: float = CONTAMINATION, n_clusters: int = 8, alpha: float = 0.9,
                 beta: float = 5, use_weights: bool = False) -> None:
        super().__init__()
        self.contamination, self.n_clusters, self.alpha, self.beta = contamination, n_clusters, alpha, beta
        self.use_weights = use_weights

    def _min_train(self) -> int:
        return int(self.n_clusters) + 1


class HBOSMethod(OutlierDetector):
    name = "hbos"
    pyod_class = HBOS

    def __init__(self, contamination: float = CONTAMINATION, n_bins: int = 10, alpha: float = 0.1,
                 tol: float = 0.5) -> None:
        super().__init__()
        self.contamination, self.n_bins, self.alpha, self.tol = contamination, n_bins, alpha, tol


class IForestMethod(OutlierDetector):
    name = "iforest"
    pyod_class = IForest
    seeded = True

    def __init__(self, contamination: float = CONTAMINATION, n_estimators: int = 100,
                 max_samples: int | float | str = "auto", max_features: float = 1.0) -> None:
        super().__init__()
        self.contamination, self.n_estimators = contamination, n_estimators
        self.max_samples, self.max_features = max_samples, max_features


class KNNMethod(OutlierDetector):
    name = "knn"
    pyod_class = KNN

    def __init__(self, contamination: float = CONTAMINATION, n_neighbors: int = 5, method: str = "largest") -> None:
        super().__init__()
        self.contamination, self.n_neighbors, self.method = contamination, n_neighbors, method


class LOFMethod(OutlierDetector):
    name = "lof"
    pyod_class = LOF
    authors_params = {"n_neighbors": 15}     # code/run_od.py: LOF(n_neighbors=15)

    def __init__(self, contamination: float = CONTAMINATION, n_neighbors: int = 20, novelty: bool = True,
                 max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.contamination, self.n_neighbors, self.novelty, self.max_train = contamination, n_neighbors, novelty, max_train


class MCDMethod(OutlierDetector):
    name = "mcd"
    pyod_class = MCD
    seeded = True
    drop_constant = True

    def __init__(self, contamination: float = CONTAMINATION, support_fraction: float | None = None,
                 assume_centered: bool = False) -> None:
        super().__init__()
        self.contamination, self.support_fraction, self.assume_centered = contamination, support_fraction, assume_centered

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
    pyod_class = OCSVM

    def __init__(self, contamination: float = CONTAMINATION, kernel: str = "rbf", gamma: str | float = "auto",
                 nu: float = 0.5, max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.contamination, self.kernel, self.gamma, self.nu, self.max_train = contamination, kernel, gamma, nu, max_train


class PCAMethod(OutlierDetector):
    name = "pca"
    pyod_class = PCA
    seeded = True
    drop_constant = True

    def __init__(self, contamination: float = CONTAMINATION, n_components: int | None = None, weighted: bool = True,
                 standardization: bool = True) -> None:
        super().__init__()
        self.contamination, self.n_components = contamination, n_components
        self.weighted, self.standardization = weighted, standardization


@njit(cache=True)
def _sos_affinities(D, log_u, eps, max_tries):
    """PyOD's ``SOS._d2a`` loop, compiled: each row's bisection with PyOD's own
    ``_get_perplexity`` (same numba reductions, same exp), same update rule and cap.

    Speed-up for a row whose perplexity is unreachable (it takes all the steps): once
    exp(-d beta) is exactly 0 for its nearest distance above 2 d_min (so for all of them,
    exp being monotone), a step is evaluated on its distances <= 2 d_min only, kept in
    PyOD's order; the sums are then bit-identical (adding an exact 0 changes nothing)."""
    n = D.shape[0]
    A = np.zeros((n, n))
    for i in range(n):
        Di = np.empty(n - 1)
        Di[:i] = D[i, :i]
        Di[i:] = D[i, i + 1:]
        d_min = Di.min()
        near = Di <= 2.0 * d_min
        far_min = np.inf
        for d in Di[~near]:
            far_min = min(far_min, d)
        Dn = Di[near]
        beta = np.ones(1)
        beta_min, beta_max = -np.inf, np.inf
        H, thisA = _get_perplexity(Di, beta)
        h_diff = H[0] - log_u
        full = True
        tries = 0
        while (np.isnan(h_diff) or np.abs(h_diff) > eps) and tries < max_tries:
            if np.isnan(h_diff):
                beta = beta / 10.0
            elif h_diff > 0:
                beta_min = beta[0]
                beta = beta * 2.0 if np.isinf(beta_max) else (beta + beta_max) / 2.0
            else:
                beta_max = beta[0]
                beta = beta / 2.0 if np.isinf(beta_min) else (beta + beta_min) / 2.0
            full = np.exp(-far_min * beta[0]) != 0.0
            H, thisA = _get_perplexity(Di if full else Dn, beta)
            h_diff = H[0] - log_u
            tries += 1
        if not full:
            H, thisA = _get_perplexity(Di, beta)
        A[i, :i] = thisA[:i]
        A[i, i + 1:] = thisA[i:]
    return A


class BatchedSOS(SOS):
    """PyOD's SOS with ``_d2a`` (the per-row perplexity search) compiled by numba.

    ``SOS._d2a`` calibrates each row's precision beta by a bisection in a Python loop, up
    to 5000 steps per row, each step a call of the numba function ``_get_perplexity``.
    Rows whose perplexity cannot be reached are where the time went: a row's entropy
    H(beta) decreases to log(m) as beta grows, m = the number of points tied at its
    smallest distance d_min; when log(m) > log(perplexity) + eps (more than 4.5 identical
    rows: on this trace, running tasks whose features are still all 0) the search runs
    all 5000 steps, ~0.1-0.2 s per row in PyOD (docs/BENCHMARKS.md, "Method cost").
    ``_sos_affinities`` runs the same loop in compiled code, calling PyOD's
    ``_get_perplexity`` itself, so the affinities are bit-identical to PyOD's (an earlier
    numpy version summed rows in numpy's pairwise order and differed in the last bits,
    enough to end a bisection one step apart; tests/test_outlier_speed.py).
    """

    MAX_TRIES = 5000  # pyod.models.sos.SOS._d2a

    def _d2a(self, D: np.ndarray) -> np.ndarray:
        return _sos_affinities(np.ascontiguousarray(D, dtype=np.float64), float(np.log(self.perplexity)),
                               float(self.eps), self.MAX_TRIES)


class SOSMethod(OutlierDetector):
    name = "sos"
    pyod_class = BatchedSOS
    transductive = True

    def __init__(self, contamination: float = CONTAMINATION, perplexity: float = 4.5, metric: str = "euclidean",
                 max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.contamination, self.perplexity, self.metric, self.max_train = contamination, perplexity, metric, max_train

    def _min_train(self) -> int:
        # the affinity of each point is calibrated to the perplexity over the
        # other n - 1 points: needs n - 1 > perplexity
        return int(np.floor(self.perplexity)) + 2


class LSCPMethod(OutlierDetector):
    name = "lscp"
    pyod_class = LSCP
    seeded = True
    authors_params = {"lof_n_neighbors": (5, 10)}   # code/run_od.py: [LOF(n_neighbors=5), LOF(n_neighbors=10)]

    def __init__(self, contamination: float = CONTAMINATION, lof_n_neighbors: tuple[int, ...] = (5, 10, 15, 20),
                 local_region_size: int = 30, max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.contamination, self.lof_n_neighbors = contamination, tuple(lof_n_neighbors)
        self.local_region_size, self.max_train = local_region_size, max_train

    def _make(self) -> Any:
        p = self._library_params()
        lofs = [LOF(n_neighbors=int(k), contamination=p["contamination"]) for k in p["lof_n_neighbors"]]
        return LSCP(lofs, local_region_size=p["local_region_size"], contamination=p["contamination"],
                    random_state=p["random_state"])

    def _min_train(self) -> int:
        return max(max(self.lof_n_neighbors), self.local_region_size) + 1


class COFMethod(OutlierDetector):
    name = "cof"
    pyod_class = COF
    transductive = True
    authors_params = {"n_neighbors": 15}     # code/run_od.py: COF(n_neighbors=15)

    def __init__(self, contamination: float = CONTAMINATION, n_neighbors: int = 20, method: str = "fast",
                 max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.contamination, self.n_neighbors, self.method, self.max_train = contamination, n_neighbors, method, max_train


class SODMethod(OutlierDetector):
    name = "sod"
    pyod_class = SOD
    transductive = True

    def __init__(self, contamination: float = CONTAMINATION, n_neighbors: int = 20, ref_set: int = 10,
                 alpha: float = 0.8, max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.contamination, self.n_neighbors, self.ref_set, self.alpha = contamination, n_neighbors, ref_set, alpha
        self.max_train = max_train


class XGBODMethod(OutlierDetector):
    """XGBOD, supervised. Labels (``labels``): ``"finished_vs_running"`` (default:
    the training set is finished (0) plus running (1) tasks; flags candidates
    predicted 1; decision, not in the paper) or ``"latency_above_tau"`` (the
    authors' code/run_od.py: finished tasks only, labelled latency > tau, which
    is all 0 before tau: then CannotFit, a single class).

    The training set is subsampled to ``max_train`` rows when larger,
    stratified (each class keeps its share); its default detector pool
    (KNN/LOF with k < n, HBOS, OCSVM, IForest) is PyOD's.
    """

    name = "xgbod"
    pyod_class = XGBOD
    seeded = True
    authors_params = {"labels": "latency_above_tau"}  # code/run_od.py: Y_train_up_b = int(b > alpha)

    def __init__(self, contamination: float | None = None, max_depth: int = 3, learning_rate: float = 0.1,
                 n_estimators: int = 100, n_jobs: int = 1, max_train: int | None = DEFAULT_MAX_TRAIN,
                 labels: str = "finished_vs_running") -> None:
        super().__init__()
        if contamination is not None:
            raise ValueError("xgbod: contamination is not used (supervised); leave it None")
        if labels not in ("finished_vs_running", "latency_above_tau"):
            raise ValueError(f"xgbod: labels={labels!r}, expected 'finished_vs_running' or 'latency_above_tau'")
        self.contamination, self.max_depth, self.learning_rate = contamination, max_depth, learning_rate
        self.n_estimators, self.n_jobs, self.max_train, self.labels = n_estimators, n_jobs, max_train, labels

    def _training_rows(self, finished: TaskSet, running: TaskSet) -> tuple[np.ndarray, np.ndarray | None]:
        if self.labels == "latency_above_tau":
            return finished.X, (finished.y > self.job.tau).astype(int)
        X = np.vstack([finished.X, running.X])
        y = np.r_[np.zeros(len(finished), int), np.ones(len(running), int)]
        return X, y

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        if self.labels == "finished_vs_running" and (len(finished) == 0 or len(running) == 0):
            raise CannotFit("xgbod: needs finished and running tasks (two classes)")
        super().fit(finished, running, t)

    def _subsample(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        """Stratified: each class keeps its share of max_train (at least one row)."""
        cap = self.max_train
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
        p.pop("labels")
        return p

    def _min_train(self) -> int:
        return 3

    def _predict(self, Xc: np.ndarray) -> np.ndarray:
        return np.asarray(self.det_.predict(Xc), dtype=int) == 1

    # supervised: the classifier's probability of "running" (predict is > 0.5), cut as a probability
    sweep_grid, sweep_strict = PROBABILITY_GRID, True

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.det_ is None or not len(candidates):
            return {}
        return {self.name: self._by_chunk(candidates, self._scores, float)}

    def sweep_flags(self, candidates: TaskSet, scores) -> dict[str, np.ndarray]:
        return Method.sweep_flags(self, candidates, scores)
