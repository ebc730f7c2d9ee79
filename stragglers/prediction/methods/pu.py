"""Positive-unlabeled baselines: PU-EN and PU-BG (docs/PROTOCOL.md section 5).

Positive = labeled = finished tasks (all non-stragglers so far), unlabeled =
running tasks. A running candidate is flagged when it does not look like a
finished task. SVM base learner (scikit-learn ``SVC``, RBF kernel, library
defaults C=1, gamma="scale"), written on scikit-learn rather than pulearn.

Both are quadratic in the training size: ``max_train`` (default 2000) caps the
rows of every SVC fit; larger sets are subsampled with the job seed (labeled
first, at most half of ``max_train``, unlabeled fill the rest). Every running
candidate is still scored.
"""

from __future__ import annotations

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.svm import SVC

from stragglers.prediction.methods._common import cannot_fit_on_error, int_seed, job_rng, quiet, require_finite, subsample
from stragglers.prediction.methods.base import PROBABILITY_GRID, CannotFit, Method, TaskSet, sweep_labels

DEFAULT_MAX_TRAIN = 2000


def _split_budget(n_lab: int, n_unl: int, max_train: int | None) -> tuple[int | None, int | None]:
    """Row caps (labeled, unlabeled) so that their sum is <= max_train."""
    if max_train is None or n_lab + n_unl <= max_train:
        return None, None
    cap_lab = min(n_lab, max(max_train // 2, max_train - n_unl))
    return cap_lab, max_train - cap_lab


def below_cuts(name: str, scores) -> dict[str, np.ndarray]:
    """A PU learner's sweep: its score is minus P(finished-like) (higher: more a straggler), and the
    cut g flags P(finished-like) < g, as the method's threshold does (no score: never)."""
    p = -np.asarray(scores[name], dtype=float) if name in scores else None
    if p is None:
        return {}
    return {label: p < g for label, g in zip(sweep_labels(name, PROBABILITY_GRID), PROBABILITY_GRID)}


class PUElkanNoto(Method):
    """PU-EN (Elkan & Noto 2008, "Learning classifiers from only positive and
    unlabeled data", KDD): a probabilistic classifier g(x) ~ P(s=1|x) is
    trained to separate labeled (finished) from unlabeled (running) tasks,
    leaving out a random ``hold_out_ratio`` of the labeled ones; c = mean g(x)
    over that hold-out estimates P(s=1|y=1); then P(y=1|x) = g(x) / c (clipped
    to 1). A running candidate is flagged if P(finished-like | x) < ``threshold``
    (0.5).

    g = SVC (RBF) calibrated by Platt scaling: ``CalibratedClassifierCV(SVC(),
    method="sigmoid", cv=5, ensemble=False)``, scikit-learn's replacement for
    ``SVC(probability=True)``, which is deprecated in 1.9 and did the same
    (5-fold Platt). Hyperparameters: hold_out_ratio 0.1 (pulearn's default),
    at least ``min_labeled`` (5) finished tasks so that the hold-out and the
    calibration folds are non-empty, ``max_train`` (2000) rows per fit.
    """

    name = "pu_en"
    family = "pu"
    notes = {"calibration": "sigmoid (Platt), cv=5, ensemble=False"}

    def __init__(self, hold_out_ratio: float = 0.1, threshold: float = 0.5, svc_kernel: str = "rbf",
                 svc_C: float = 1.0, svc_gamma: str | float = "scale", min_labeled: int = 5,
                 max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.hold_out_ratio, self.threshold = hold_out_ratio, threshold
        self.svc_kernel, self.svc_C, self.svc_gamma = svc_kernel, svc_C, svc_gamma
        self.min_labeled, self.max_train = min_labeled, max_train

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.model_ = None
        p = self.get_params()
        n_lab, n_unl = len(finished), len(running)
        if n_lab < p["min_labeled"]:
            raise CannotFit(f"pu_en: {n_lab} finished tasks, needs >= {p['min_labeled']}")
        if n_unl < 2:
            raise CannotFit(f"pu_en: {n_unl} running tasks, needs >= 2")
        rng = job_rng(self.job.seed, 21)
        perm = rng.permutation(n_lab)
        n_hold = max(1, int(round(p["hold_out_ratio"] * n_lab)))
        hold, lab = perm[:n_hold], perm[n_hold:]
        cap_lab, cap_unl = _split_budget(len(lab), n_unl, p["max_train"])
        lab = lab[subsample(len(lab), cap_lab, rng)]
        unl = subsample(n_unl, cap_unl, rng)
        X = np.vstack([finished.X[lab], running.X[unl]])
        s = np.r_[np.ones(len(lab), int), np.zeros(len(unl), int)]
        # Platt calibration uses stratified k-fold: k <= members of each class
        cv = int(min(5, len(lab), len(unl)))
        if cv < 2:
            raise CannotFit("pu_en: too few rows per class for Platt calibration")
        svc = SVC(kernel=p["svc_kernel"], C=p["svc_C"], gamma=p["svc_gamma"], random_state=int_seed(self.job.seed))
        model = CalibratedClassifierCV(svc, method="sigmoid", cv=cv, ensemble=False)
        with cannot_fit_on_error("pu_en fit"), quiet():
            model.fit(X, s)
            g_hold = model.predict_proba(finished.X[hold])[:, 1]
        c = float(np.mean(require_finite(g_hold, "pu_en hold-out scores")))
        if not c > 0:
            raise CannotFit("pu_en: c = mean g(hold-out labeled) is 0")
        self.model_, self.c_ = model, c

    def finished_probability(self, X: np.ndarray) -> np.ndarray:
        """P(y = 1 | x) = g(x) / c, clipped to [0, 1] (y = 1: finished-like)."""
        with cannot_fit_on_error("pu_en score"), quiet():
            g = self.model_.predict_proba(X)[:, 1]
        return np.clip(require_finite(g, "pu_en scores") / self.c_, 0.0, 1.0)

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.model_ is None:
            raise CannotFit("pu_en: not fitted")
        if len(candidates) == 0:
            return {self.name: np.zeros(0, dtype=bool)}
        return {self.name: self.finished_probability(candidates.X) < self.get_params()["threshold"]}

    sweep_grid = PROBABILITY_GRID

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.model_ is None or not len(candidates):
            return {}
        return {self.name: -self.finished_probability(candidates.X)}

    def sweep_flags(self, candidates: TaskSet, scores) -> dict[str, np.ndarray]:
        return below_cuts(self.name, scores)


class PUBagging(Method):
    """PU-BG (Mordelet & Vert 2014, "A bagging SVM to learn from positive and
    unlabeled examples", Pattern Recognition Letters): for k = 1..K, draw a
    bootstrap sample of the unlabeled (running) tasks of the size of the
    labeled (finished) set, train an SVM of all labeled (1) vs that sample
    (0), and score the unlabeled tasks left out of the sample (out-of-bag).
    A running task's score is the mean of its out-of-bag scores, the score of
    one round being the SVM's vote for "finished" (1/0; scikit-learn's
    bagging also averages votes for a base learner without predict_proba).
    A running candidate is flagged if its score < ``threshold`` (0.5), i.e.
    it is classified unlabeled-like by most rounds that did not train on it.
    A task that is in every bootstrap (only when |U| is tiny) gets the mean
    over all rounds instead.

    Hyperparameters: n_estimators K = 10 (pulearn's BaggingPuClassifier
    default), SVC RBF C=1 gamma="scale", ``max_train`` (2000) rows per fit:
    labeled subsampled to max_train // 2 when larger (with the job seed).
    """

    name = "pu_bg"
    family = "pu"
    notes = {"score": "out-of-bag mean vote for finished"}

    def __init__(self, n_estimators: int = 10, threshold: float = 0.5, svc_kernel: str = "rbf",
                 svc_C: float = 1.0, svc_gamma: str | float = "scale",
                 max_train: int | None = DEFAULT_MAX_TRAIN) -> None:
        super().__init__()
        self.n_estimators, self.threshold = n_estimators, threshold
        self.svc_kernel, self.svc_C, self.svc_gamma, self.max_train = svc_kernel, svc_C, svc_gamma, max_train

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.scores_ = None
        p = self.get_params()
        n_lab, n_unl = len(finished), len(running)
        if n_lab < 2 or n_unl < 2:
            raise CannotFit(f"pu_bg: {n_lab} finished / {n_unl} running tasks, needs >= 2 of each")
        rng = job_rng(self.job.seed, 22)
        cap = None if p["max_train"] is None else max(1, p["max_train"] // 2)
        lab = subsample(n_lab, cap, rng)
        m = len(lab)
        oob_sum, oob_cnt = np.zeros(n_unl), np.zeros(n_unl)
        all_sum = np.zeros(n_unl)
        for k in range(int(p["n_estimators"])):
            boot = rng.integers(0, n_unl, size=m)
            X = np.vstack([finished.X[lab], running.X[boot]])
            s = np.r_[np.ones(m, int), np.zeros(m, int)]
            svc = SVC(kernel=p["svc_kernel"], C=p["svc_C"], gamma=p["svc_gamma"])
            with cannot_fit_on_error("pu_bg fit"), quiet():
                svc.fit(X, s)
                vote = svc.predict(running.X).astype(float)
            oob = np.ones(n_unl, bool)
            oob[boot] = False
            oob_sum[oob] += vote[oob]
            oob_cnt[oob] += 1
            all_sum += vote
        scores = np.where(oob_cnt > 0, oob_sum / np.maximum(oob_cnt, 1), all_sum / p["n_estimators"])
        self.scores_ = dict(zip(running.task_ids.tolist(), scores.tolist()))

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.scores_ is None:
            raise CannotFit("pu_bg: not fitted")
        try:
            sc = np.array([self.scores_[int(i)] for i in candidates.task_ids], dtype=float)
        except KeyError as exc:
            raise CannotFit(f"pu_bg: candidate {exc} was not among the running tasks at fit") from exc
        return {self.name: sc < self.get_params()["threshold"]}

    sweep_grid = PROBABILITY_GRID

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        # the out-of-bag vote for "finished" (a task not running at fit: none)
        if self.scores_ is None:
            return {}
        return {self.name: -np.array([self.scores_.get(int(i), np.nan) for i in candidates.task_ids], dtype=float)}

    def sweep_flags(self, candidates: TaskSet, scores) -> dict[str, np.ndarray]:
        return below_cuts(self.name, scores)
