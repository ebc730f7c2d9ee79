"""The censored normal fitters (no method here: survival.py uses them); the likelihood they maximize
is stragglers/prediction/statistics/likelihood.py's.

Right-censored normal regression, y* = Z beta + sigma eps, eps ~ N(0, 1): a finished task is an
exact observation y, a running one is censored at c (known only to be >= c). Shaped like
lifelines' parametric regression fitters: a base class (``CensoredNormalFitter``) owns the
optimisation (L-BFGS-B on (beta, log sigma) with the analytic gradient), its failure checks and
the parameters' intervals; each model names its start, its objective and its transform back
to the data's units. Grabit's boosting objective (the same likelihood, per row) is here too.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import numpy as np
from scipy import optimize, special

from stragglers.prediction.statistics.likelihood import inv_mills, tobit_negloglik
from stragglers.prediction.methods._common import quiet
from stragglers.prediction.methods.base import CannotFit


# ----------------------------------------------------------------------------- the fitters
class CensoredNormalFitter:
    """Base of the censored normal fitters: fit, failure checks, intervals.

    A model sets ``label`` (the start of its failure reasons), ``min_exact`` (exact rows it
    needs), ``sigma_collapse`` (the reason when sigma -> 0), ``gradient_tolerance`` and
    implements ``_standardize`` (the data's units -> the optimiser's, and the start),
    ``_objective`` (its one function: the negative log-likelihood, or log-posterior, and its
    gradient) and ``_unstandardize`` (back to the data's units). After ``fit``: ``beta_``
    (``beta_[0]`` the intercept: the prediction is ``beta_[0] + X @ beta_[1:]``) and ``sigma_``.
    """

    label: ClassVar[str] = "censored normal"
    min_exact: ClassVar[int] = 2
    sigma_collapse: ClassVar[str] = "sigma -> 0"
    # L-BFGS-B often stops on "ABNORMAL_TERMINATION_IN_LNSRCH" at the optimum (precision loss):
    # accepted if max |grad| <= gradient_tolerance * max(1, n); None accepts wherever it stopped
    gradient_tolerance: ClassVar[float | None] = 1e-3

    def __init__(self, max_iter: int = 1000) -> None:
        self.max_iter = max_iter

    # --- what each model names
    def _standardize(self, Z: np.ndarray, y: np.ndarray, cens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(y in the optimiser's units, the start theta0 = (beta, log sigma)); sets the transform back."""
        raise NotImplementedError

    def _objective(self, theta: np.ndarray, Z: np.ndarray, y: np.ndarray, cens: np.ndarray) -> tuple[float, np.ndarray]:
        return tobit_negloglik(theta, Z, y, cens)

    def _unstandardize(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """(beta, sigma) in the data's units from theta = (beta, log sigma) in the optimiser's."""
        raise NotImplementedError

    def _scales(self, k: int) -> np.ndarray:
        """d(theta in the data's units)/d(theta in the optimiser's), per parameter (the transform is affine)."""
        return np.ones(k)

    # --- what the base owns
    def fit(self, X: np.ndarray, y: np.ndarray, censored: np.ndarray) -> "CensoredNormalFitter":
        """Fit on X (no intercept column: one is added), y (latency or censoring time), censored flags.
        Raises ``CannotFit`` with too few exact rows, when the optimiser fails or sigma collapses."""
        X, y, cens = np.asarray(X, float), np.asarray(y, float), np.asarray(censored, bool)
        n_exact = int(np.sum(~cens))
        if n_exact < self.min_exact:
            raise CannotFit(self._too_few(n_exact))
        Z = np.c_[np.ones(len(X)), X]
        ys, theta0 = self._standardize(Z, y, cens)
        with quiet():
            res = optimize.minimize(self._objective, theta0, args=(Z, ys, cens), jac=True, method="L-BFGS-B",
                                    options={"maxiter": self.max_iter})
        theta = res.x
        if not np.all(np.isfinite(theta)) or not np.isfinite(res.fun):
            raise CannotFit(f"{self.label}: optimiser diverged ({res.message})")
        if not res.success and self.gradient_tolerance is not None:
            gnorm = float(np.max(np.abs(self._objective(theta, Z, ys, cens)[1])))
            if gnorm > self.gradient_tolerance * max(1.0, len(y)):
                raise CannotFit(f"{self.label}: no convergence ({res.message}; max |grad| {gnorm:.3g})")
        if float(np.exp(theta[-1])) < 1e-6:
            raise CannotFit(f"{self.label}: {self.sigma_collapse}")
        self.theta_, self._data = theta, (Z, ys, cens)
        self.beta_, self.sigma_ = self._unstandardize(theta)
        return self

    def _too_few(self, n_exact: int) -> str:
        return f"{self.label}: {n_exact} exact observations, needs >= {self.min_exact}"

    def confidence_intervals(self, alpha: float = 0.05, step: float = 1e-5) -> np.ndarray:
        """(k + 1, 2) lower and upper bounds of (beta, log sigma) in the data's units: Wald intervals
        from the observed information (the objective's Hessian at the optimum, by central
        differences of the analytic gradient), as lifelines' ``confidence_intervals_``."""
        Z, ys, cens = self._data
        k = len(self.theta_)
        H = np.empty((k, k))
        for j in range(k):
            e = np.zeros(k)
            e[j] = step
            H[:, j] = (self._objective(self.theta_ + e, Z, ys, cens)[1]
                       - self._objective(self.theta_ - e, Z, ys, cens)[1]) / (2 * step)
        se = np.sqrt(np.diag(np.linalg.inv(0.5 * (H + H.T)))) * self._scales(k)
        est = np.r_[self.beta_, np.log(self.sigma_)]
        z = special.ndtri(1 - alpha / 2)
        return np.c_[est - z * se, est + z * se]


class TobitFitter(CensoredNormalFitter):
    """Maximum-likelihood Tobit (right-censored linear normal) regression.

    y is divided by its scale (mean |y|) during the optimisation (started from OLS on all
    rows) and the result is scaled back. Raises ``CannotFit`` when the optimiser fails or
    sigma collapses (likelihood unbounded).
    """

    label = "tobit"
    sigma_collapse = "sigma -> 0 (likelihood unbounded: exact rows fitted exactly)"

    def _standardize(self, Z: np.ndarray, y: np.ndarray, cens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.scale_ = float(np.mean(np.abs(y))) or 1.0
        ys = y / self.scale_
        b0, *_ = np.linalg.lstsq(Z, ys, rcond=None)
        s0 = float(np.std(ys - Z @ b0)) or 1.0
        return ys, np.r_[b0, np.log(s0)]

    def _unstandardize(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        return theta[:-1] * self.scale_, float(np.exp(theta[-1])) * self.scale_

    def _scales(self, k: int) -> np.ndarray:
        return np.r_[np.full(k - 1, self.scale_), 1.0]


class TobitMapFitter(CensoredNormalFitter):
    """Maximum a posteriori Tobit: the censored normal likelihood of ``TobitFitter`` times Gaussian
    priors on the slopes (mean ``prior_beta``, precision ``precision``) and on log sigma (mean
    log ``prior_sigma``, precision ``sigma_precision``); the intercept is free. With every
    precision 0 it is ``TobitFitter``. The latencies are centred on their median (the intercept
    is near 0); the optimiser starts at the prior and stops where L-BFGS-B stops.
    """

    label = "tobit map"
    min_exact = 1
    gradient_tolerance = None

    def __init__(self, prior_beta: np.ndarray, prior_sigma: float, precision: np.ndarray,
                 sigma_precision: float, max_iter: int = 1000) -> None:
        super().__init__(max_iter)
        self.prior_beta, self.precision = np.asarray(prior_beta, float), np.asarray(precision, float)
        self.log_prior_sigma, self.sigma_precision = float(np.log(prior_sigma)), sigma_precision

    def _too_few(self, n_exact: int) -> str:
        return f"{self.label}: no exact observation, the level is not identified"

    def _standardize(self, Z: np.ndarray, y: np.ndarray, cens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.center_ = float(np.median(y))          # conditioning: the intercept is near 0
        return y - self.center_, np.r_[0.0, self.prior_beta, self.log_prior_sigma]

    def _objective(self, theta: np.ndarray, Z: np.ndarray, y: np.ndarray, cens: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = tobit_negloglik(theta, Z, y, cens)
        d = theta[1:-1] - self.prior_beta
        ds = theta[-1] - self.log_prior_sigma
        g = g.copy()
        g[1:-1] += self.precision * d
        g[-1] += self.sigma_precision * ds
        return f + 0.5 * float(np.sum(self.precision * d * d)) + 0.5 * self.sigma_precision * ds * ds, g

    def _unstandardize(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        beta = theta[:-1].copy()
        beta[0] += self.center_
        return beta, float(np.exp(theta[-1]))


# ----------------------------------------------------------------------------- Grabit's loss
def tobit_objective(sigma: float, min_hess: float = 1e-6) -> Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray]]:
    """XGBoost custom objective: censored-normal (Tobit) negative log-likelihood.

    Use with ``xgboost.train(..., obj=tobit_objective(sigma))``. The DMatrix
    carries the censoring through ``label_lower_bound``/``label_upper_bound``
    (as for xgboost's survival objectives): lower == upper is an exact
    observation y, upper == +inf is right-censored at lower (y >= c). Without
    bounds every row is exact at its label.

    Per row, with prediction f (Sigrist & Hirnschall 2019, "Grabit"):
      exact:    nll = (y - f)^2 / (2 s^2) + log s + log sqrt(2 pi)
                grad = (f - y) / s^2,  hess = 1 / s^2
      censored: nll = -log Phi((f - c) / s);  u = (f - c)/s, m(u) = phi(u)/Phi(u)
                grad = -m(u) / s,  hess = m(u) (u + m(u)) / s^2  (in (0, 1/s^2))
    The hessian is clipped below at ``min_hess / s^2`` (it underflows to 0
    for f >> c). With no censoring grad/hess are those of squared error
    divided by s^2: with s = 1 identical to ``reg:squarederror``.
    """
    s = float(sigma)
    if not s > 0:
        raise ValueError("sigma must be > 0")

    def objective(preds: np.ndarray, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
        f = np.asarray(preds, float)
        lo = dtrain.get_float_info("label_lower_bound")
        hi = dtrain.get_float_info("label_upper_bound")
        if len(lo) == 0:
            lo = hi = dtrain.get_label()
        lo = np.asarray(lo, float)
        cens = ~np.isfinite(np.asarray(hi, float))
        grad = (f - lo) / s**2
        hess = np.full_like(f, 1.0 / s**2)
        if cens.any():
            u = (f[cens] - lo[cens]) / s
            m = inv_mills(-u)   # phi(u) / Phi(u)
            grad[cens] = -m / s
            hess[cens] = m * (u + m) / s**2
        hess = np.maximum(hess, min_hess / s**2)
        return grad, hess

    return objective
