"""Hound's three base learners (Section 3.1): each turns one job's task metrics
X (M tasks x P metrics) and latencies y into a causality profile C in [-1, 1]^P
with sum_i |C_i| = 1 (all zeros when the learner finds nothing).

One interface, like the prediction methods: a small class with explicit
hyperparameters and ``profile(X, y)``; ``LEARNERS`` is the registry.
``profile_job`` is the plain per-job function (one job's frame in, rows out),
so the jobs can be spread over processes or a Dask cluster.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn.ensemble import AdaBoostClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import ElasticNet, ElasticNetCV

from stragglers.settings.diagnosis import HoundSettings
from stragglers.diagnosis.vocabulary import METRIC_COLUMNS, METRICS


def absolute_sum_one(c: np.ndarray) -> np.ndarray:
    """Section 3.1: rescale so that sum_i |C_i| = 1 (zeros stay zeros)."""
    c = np.nan_to_num(np.asarray(c, dtype=float))
    s = np.abs(c).sum()
    return c / s if s > 0 else np.zeros_like(c)


def varies(a: np.ndarray) -> np.ndarray:
    """Which columns take more than one value. Exact (max > min): a constant column's float std can
    come out as 1e-21 instead of 0, and dividing by it would turn rounding into a signal."""
    a = np.asarray(a, dtype=float)
    return np.ptp(a, axis=0) > 0


def standardize(a: np.ndarray) -> np.ndarray:
    """Columns to mean 0 / sd 1; constant columns become 0."""
    a = np.asarray(a, dtype=float)
    ok = varies(a)
    sd = np.where(ok, a.std(axis=0), 1.0)
    return np.where(ok, (a - a.mean(axis=0)) / sd, 0.0)


# --------------------------------------------------------------------------- PR
@dataclass(frozen=True)
class BaggedElasticNet:
    """PR: Bagging Augmented ElasticNet (Hound Appendix A, Algorithm 1).

    On standardized metrics and latency, fit ElasticNet on each of I bootstrap
    replicas D_1..D_I and average: beta = (1/I) sum_i beta^(i), where beta^(i)
    minimizes ||y - X beta||^2 + lambda_1 ||beta||_2^2 + lambda_2 ||beta||_1
    (scikit-learn's parametrization: alpha, l1_ratio). The paper gives no
    lambdas: alpha is chosen once per job by 5-fold ElasticNetCV on the whole
    job, then kept for the replicas. The profile is beta rescaled to absolute
    sum one."""

    replicas: int = 20
    l1_ratio: float = 0.5
    seed: int = 0
    name: str = "PR"

    def coefficients(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        Z, ys = standardize(X), standardize(y.reshape(-1, 1)).ravel()
        with warnings.catch_warnings():
            # the smallest alphas of the CV path converge slowly on collinear metrics; the chosen alpha is
            # the CV optimum, and an unconverged path end only makes it a worse candidate
            warnings.simplefilter("ignore", ConvergenceWarning)
            cv = ElasticNetCV(l1_ratio=self.l1_ratio, alphas=20, eps=1e-2, cv=5, random_state=self.seed).fit(Z, ys)
            rng = np.random.default_rng(self.seed)
            n = len(ys)
            betas = []
            for _ in range(self.replicas):
                idx = rng.integers(0, n, n)
                betas.append(ElasticNet(alpha=cv.alpha_, l1_ratio=self.l1_ratio).fit(Z[idx], ys[idx]).coef_)
        return np.mean(betas, axis=0)

    def profile(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return absolute_sum_one(self.coefficients(X, y))


# --------------------------------------------------------------------------- DP
def signed_schweizer_wolff(x: np.ndarray, y: np.ndarray, *, grid: np.ndarray | None = None,
                           sign_tol: float | None = None) -> float:
    """SSW(X, Y) = sign(X, Y) * SWD(X, Y) (Hound Section 3.1).

    The empirical copula C(u_i, v_j) = #{k: x_k <= x_i, y_k <= y_j} / N uses all
    N pairs; the double sums over (u_i, v_j) run over the tasks in ``grid``
    (indices; all N when None), which is the paper's sampling for the O(N^2)
    sums:

        SWD = 12 / (m^2 - 1) * sum_{i,j in grid} |C(u_i, v_j) - u_i v_j|
        L1  = mean_{i,j} (min(u_i, v_j) - C(u_i, v_j))      (distance to the upper bound)
        L2  = mean_{i,j} (C(u_i, v_j) - max(u_i + v_j - 1, 0))  (to the lower bound)
        sign = -1 if L1 - L2 > eps, +1 if L2 - L1 > eps, 0 otherwise

    (the paper prints the +1 case as "L2 - L1 < eps"; read as L1 - L2 < -eps).
    L1 - L2 = -rho_S / 6 on the full grid (rho_S: Spearman), so the default
    eps = 1 / (6 sqrt(N - 1)) is one standard error of rho_S / 6 under
    independence. Vectorized: the counts come from one 2-D histogram of the
    ranks on the grid's thresholds and two cumulative sums, O(N + m^2).
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    rx, ry = rankdata(x, method="max"), rankdata(y, method="max")   # u = rx / n = F_X(x)
    g = np.arange(n) if grid is None else np.asarray(grid)
    a, b = np.sort(rx[g]), np.sort(ry[g])
    m = len(g)
    # bin p = first grid threshold >= the rank; C[p, q] = #{rx <= a_p, ry <= b_q} / n
    bx, by = np.searchsorted(a, rx, side="left"), np.searchsorted(b, ry, side="left")
    keep = (bx < m) & (by < m)
    h = np.zeros((m, m))
    np.add.at(h, (bx[keep], by[keep]), 1.0)
    c = h.cumsum(axis=0).cumsum(axis=1) / n
    u, v = (a / n)[:, None], (b / n)[None, :]
    swd = 12.0 / (m * m - 1) * np.abs(c - u * v).sum()
    l1 = np.mean(np.minimum(u, v) - c)
    l2 = np.mean(c - np.maximum(u + v - 1.0, 0.0))
    eps = 1.0 / (6.0 * math.sqrt(n - 1)) if sign_tol is None else sign_tol
    sign = -1.0 if l1 - l2 > eps else (1.0 if l2 - l1 > eps else 0.0)
    return float(sign * min(swd, 1.0))


@dataclass(frozen=True)
class SignedSchweizerWolff:
    """DP: Signed Schweizer-Wolff dependence of each metric with latency
    (Hound Section 3.1, Table 1). Sampling: the double sums visit a seeded
    sample of max(min_grid, ceil(sqrt(M))) tasks (Appendix G: a 1/sqrt(M)
    sampling rate; the floor keeps small jobs' integrals from getting coarse)."""

    min_grid: int = 50
    sign_tol: float | None = None
    seed: int = 0
    name: str = "DP"

    def grid(self, n: int) -> np.ndarray:
        m = min(n, max(self.min_grid, math.ceil(math.sqrt(n))))
        return np.sort(np.random.default_rng(self.seed).choice(n, size=m, replace=False))

    def dependences(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        g = self.grid(len(y))
        return np.array([signed_schweizer_wolff(X[:, j], y, grid=g, sign_tol=self.sign_tol)
                         for j in range(X.shape[1])])

    def profile(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return absolute_sum_one(self.dependences(X, y))


# --------------------------------------------------------------------------- CA
def adaboost_propensity(confounders: np.ndarray, z: np.ndarray, rounds: int, seed: int) -> np.ndarray:
    """Algorithm 2: e(X) = P{Z = 1 | X} = 1 / (1 + exp(-2 f(X))), f = sum_i alpha_i h_i(X),
    alpha_i = 1/2 log((1 - err_i) / err_i). scikit-learn's SAMME (two classes) uses
    alpha_i^sk = log((1 - err_i) / err_i) = 2 alpha_i and reports the normalized
    decision d = sum alpha^sk h / sum alpha^sk, so 2 f = d * sum alpha^sk."""
    clf = AdaBoostClassifier(n_estimators=rounds, random_state=seed).fit(confounders, z)
    two_f = clf.decision_function(confounders) * float(np.sum(clf.estimator_weights_[: len(clf.estimators_)]))
    return 1.0 / (1.0 + np.exp(-np.clip(two_f, -50, 50)))


def ipw_effect(z: np.ndarray, r: np.ndarray, e: np.ndarray) -> float:
    """Delta = E[Z R / e(X)] - E[(1 - Z) R / (1 - e(X))] (Hound Section 3.1, Rubin causal model)."""
    return float(np.mean(z * r / e) - np.mean((1 - z) * r / (1 - e)))


@dataclass(frozen=True)
class AdaBoostIPW:
    """CA: Rubin causal model with AdaBoost inverse probability weighting
    (Hound Section 3.1, Algorithm 2). Per metric j: treatment Z = metric above
    its job median; confounders X = the other metrics min-max scaled to [0, 1];
    propensity e(X) from AdaBoost (clipped to [clip, 1 - clip], which the paper
    does not do: unclipped boosted scores reach 0 and 1); response R = the
    standardized latency; effect Delta by IPW. The profile is Delta rescaled."""

    rounds: int = 50
    clip: float = 0.02
    seed: int = 0
    name: str = "CA"
    propensity: str = "adaboost"   # Figure 10's rivals: "logistic", "naive_bayes"

    def propensities(self, conf: np.ndarray, z: np.ndarray) -> np.ndarray:
        if self.propensity == "adaboost":
            e = adaboost_propensity(conf, z, self.rounds, self.seed)
        elif self.propensity == "logistic":
            from sklearn.linear_model import LogisticRegression
            e = LogisticRegression(max_iter=1000).fit(conf, z).predict_proba(conf)[:, 1]
        elif self.propensity == "naive_bayes":
            from sklearn.naive_bayes import GaussianNB
            e = GaussianNB().fit(conf, z).predict_proba(conf)[:, 1]
        else:
            raise ValueError(f"unknown propensity estimator {self.propensity!r}")
        return np.clip(e, self.clip, 1 - self.clip)

    def effects(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        X = np.asarray(X, float)
        lo, span = X.min(axis=0), np.ptp(X, axis=0)
        scaled = np.where(span > 0, (X - lo) / np.where(span > 0, span, 1.0), 0.0)
        r = standardize(y.reshape(-1, 1)).ravel()
        out = np.zeros(X.shape[1])
        for j in range(X.shape[1]):
            z = (X[:, j] > np.median(X[:, j])).astype(float)
            if z.min() == z.max():
                continue
            e = self.propensities(np.delete(scaled, j, axis=1), z)
            out[j] = ipw_effect(z, r, e)
        return out

    def profile(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return absolute_sum_one(self.effects(X, y))


LEARNERS = ("PR", "DP", "CA")


# ------------------------------------------------- share weights (measured beside Hound's own, docs/HOUND.md)
def straggler_shares(X: np.ndarray, y: np.ndarray, quantile: float = 0.9) -> np.ndarray:
    """Per metric, the share of the job's stragglers that deviate from its normal tasks, signed
    (+: higher for stragglers). A straggler's latency is above the job's ``quantile``; the others are
    normal. The share is Cliff's delta, d = P(x_S > x_N) - P(x_S < x_N) over (straggler, normal) pairs,
    ties counting 0: the Wilcoxon rank-sum comparison of Hound's case studies (Section 5.2) read as a
    share. Averaged over the normal tasks' values as thresholds, it is the fraction of stragglers
    beyond the threshold on the word's side minus the fraction on the other side (for normal tasks
    the two fractions cancel). If a fraction f of the stragglers lies beyond every normal task and the
    others are spread as the normal tasks are, d = f. Zero when the job has no straggler or no normal
    task."""
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    s = y > np.quantile(y, quantile)
    out = np.zeros(X.shape[1])
    if s.all() or not s.any():
        return out
    for j in range(X.shape[1]):
        xn = np.sort(X[~s, j])
        below = np.searchsorted(xn, X[s, j], side="left")               # normal tasks below each straggler
        above = len(xn) - np.searchsorted(xn, X[s, j], side="right")    # and above it
        out[j] = float(np.mean(below - above)) / len(xn)
    return out


def multiplicity(X: np.ndarray) -> np.ndarray:
    """Per metric, how many of the job's metrics carry its signal: m_j = sum_k rho_jk^2 with Spearman's
    rho over the job's tasks (rho_jj = 1; a constant metric has m = 1). k metrics that move together
    get m = k each, so together they weigh as one; a metric unrelated to the others gets m = 1."""
    X = np.asarray(X, float)
    ok = varies(X)
    r2 = np.eye(X.shape[1])
    if ok.sum() > 1:
        rho = np.atleast_2d(np.nan_to_num(pd.DataFrame(X[:, ok]).corr(method="spearman").to_numpy()))
        r2[np.ix_(ok, ok)] = rho ** 2
        np.fill_diagonal(r2, 1.0)
    return r2.sum(axis=0)


def share_weighted(profile: np.ndarray, shares: np.ndarray, mult: np.ndarray | None = None) -> np.ndarray:
    """A learner's causality profile with Section 5.1's weights: the learner keeps its words (which
    metrics, with which sign), and each word weighs the share of stragglers that show it
    (``straggler_shares`` in the word's direction; 0 where the stragglers deviate the other way),
    divided by the metric's ``multiplicity`` when given; absolute sum one. Only the profile's signs
    are read, so a stored (rescaled) profile gives the same result as the learner's raw output."""
    sign = np.sign(np.nan_to_num(np.asarray(profile, float)))
    w = sign * np.clip(sign * np.asarray(shares, float), 0.0, None)
    return absolute_sum_one(w if mult is None else w / np.asarray(mult, float))


def make_learners(s: HoundSettings) -> dict:
    return {
        "PR": BaggedElasticNet(replicas=s.replicas, l1_ratio=s.l1_ratio, seed=s.seed),
        "DP": SignedSchweizerWolff(min_grid=s.ssw_min_grid, sign_tol=s.ssw_sign_tol, seed=s.seed),
        "CA": AdaBoostIPW(rounds=s.adaboost_rounds, clip=s.propensity_clip, seed=s.seed),
    }


# --------------------------------------------------------------------------- per job
def job_matrix(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """One job's hound_inputs rows -> (X over METRIC_COLUMNS, latency, imputed counts).
    A missing value takes the job's median of the metric (0 when the job has none);
    the number imputed per metric is returned so that it can be reported."""
    X = frame.reindex(columns=list(METRIC_COLUMNS)).astype(float)
    imputed = {c: int(n) for c, n in X.isna().sum().items() if n}
    X = X.fillna(X.median()).fillna(0.0)
    y = frame["latency_s"].to_numpy(float)
    if not np.isfinite(y).all():
        raise ValueError(f"job {frame['job_id'].iloc[0]}: latency_s has missing or infinite values")
    return X.to_numpy(), y, imputed


def profile_job(frame: pd.DataFrame, settings: HoundSettings) -> pd.DataFrame:
    """The plain per-job function: one job's hound_inputs rows -> one row per
    (learner, metric) with the profile weight (every learner, even when empty). With
    ``profile_weights = "share"`` each profile is ``share_weighted`` by the job's straggler shares
    and metric multiplicities."""
    X, y, imputed = job_matrix(frame)
    job_id = int(frame["job_id"].iloc[0])
    share = settings.profile_weights == "share"
    if share:
        shares, mult = straggler_shares(X, y, settings.straggler_quantile), multiplicity(X)
    rows = []
    for name, learner in make_learners(settings).items():
        c = learner.profile(X, y)
        if share:
            c = share_weighted(c, shares, mult)
        for col, w in zip(METRIC_COLUMNS, c):
            rows.append((job_id, name, METRICS[col], float(w), len(y), imputed.get(col, 0)))
    return pd.DataFrame(rows, columns=["job_id", "learner", "metric", "weight", "n_tasks", "n_imputed"])
