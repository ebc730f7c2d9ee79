"""The right-censored normal likelihood, written once: the Tobit fitters (methods/censored.py)
maximize it over a regression, the online threshold (threshold.py) over a log-normal's
(mu, log sigma) of the log-latencies (an intercept-only regression); Grabit's boosting objective
(methods/censored.py) takes its gradient per row, through the same inverse Mills ratio."""

from __future__ import annotations

import numpy as np
from scipy import special

LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def inv_mills(z: np.ndarray) -> np.ndarray:
    """lambda(z) = phi(z) / (1 - Phi(z)) = phi(z) / Phi(-z), computed in logs."""
    return np.exp(-0.5 * z * z - LOG_SQRT_2PI - special.log_ndtr(-z))


def censored_normal_loglik(z: np.ndarray, censored: np.ndarray, log_s: float) -> np.ndarray:
    """Each row's log-likelihood, z = (y - prediction) / s: log phi(z) - log s for an exact row,
    log(1 - Phi(z)) for a row censored at y (the observation is >= y)."""
    out = np.empty_like(z)
    out[~censored] = -0.5 * z[~censored] ** 2 - LOG_SQRT_2PI - log_s
    out[censored] = special.log_ndtr(-z[censored])
    return out


def tobit_nll(f: np.ndarray, y: np.ndarray, censored: np.ndarray, sigma: float) -> np.ndarray:
    """Per-row censored-normal negative log-likelihood at predictions ``f`` (the Grabit loss)."""
    f, y, c = np.asarray(f, float), np.asarray(y, float), np.asarray(censored, bool)
    return -censored_normal_loglik((y - f) / sigma, c, float(np.log(sigma)))


def tobit_negloglik(theta: np.ndarray, Z: np.ndarray, y: np.ndarray, cens: np.ndarray) -> tuple[float, np.ndarray]:
    """Negative Tobit log-likelihood and its gradient in theta = (beta, log sigma).

    Right-censored normal regression, y* = Z beta + sigma eps, eps ~ N(0, 1)
    (Tobin 1958; Amemiya 1984, "Tobit models: a survey", J. Econometrics 24):

        log L = sum_{exact i}    [ log phi((y_i - z_i b) / s) - log s ]
              + sum_{censored i}   log(1 - Phi((c_i - z_i b) / s))

    with c_i the censoring time (the observation is y_i >= c_i). Gradient, with
    z = (y - Zb)/s and lambda(z) = phi(z)/(1 - Phi(z)) (inverse Mills ratio):
      exact:    d/db = z Z / s,         d/dlog s = z^2 - 1
      censored: d/db = lambda(z) Z / s, d/dlog s = lambda(z) z
    """
    beta, log_s = theta[:-1], theta[-1]
    s = np.exp(log_s)
    z = (y - Z @ beta) / s
    ex, ce = ~cens, cens
    rows = censored_normal_loglik(z, ce, log_s)
    ll = np.sum(rows[ex]) + np.sum(rows[ce])
    lam = inv_mills(z[ce])
    g_beta = Z[ex].T @ z[ex] / s + Z[ce].T @ lam / s
    g_logs = np.sum(z[ex] ** 2 - 1.0) + np.sum(lam * z[ce])
    return -float(ll), -np.r_[g_beta, g_logs]
