"""The straggler threshold a scheduler can know at time t (the operator's protocol).

The paper hands every method the job's true p90 latency tau, known only once the job is
over. Under ``threshold="online"`` a method is given tau_hat(t) instead: the job's latency
quantile estimated from what is known at checkpoint t,

- the finished tasks' latencies (exact observations), and
- the running tasks' elapsed times (right-censored observations; on the protocol's common
  clock every running task has run exactly t seconds).

tau_hat(t) is the Kaplan-Meier quantile (lifelines ``KaplanMeierFitter``; the smallest
event time s with S(s) <= 1 - q, lifelines' ``qth_survival_time`` convention). It is
undefined while more than 1 - q of the tasks still run (S never reaches 1 - q within the
observed times): on the common clock, at every checkpoint before the true tau. The rule
there (documented in docs/EVALUATION.md): fit a log-normal distribution to the same
censored data by maximum likelihood (scipy ``lognorm.fit`` on ``CensoredData``, location 0)
and take its q-quantile, but never less than t (the KM estimate says the quantile lies beyond
t). With fewer than two distinct finished latencies the log-normal cannot be fitted and
tau_hat is +inf (a method that thresholds a predicted latency flags nothing).

``conditional_survival`` gives P(Y > x | Y > t) from the same estimate: the Kaplan-Meier
curve where it is defined (x <= the largest finished latency), the log-normal tail beyond.

Labels never change: a straggler is still a task whose latency is >= the true tau.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from lifelines import KaplanMeierFitter
from lifelines.utils import qth_survival_time
from scipy import optimize, stats

from stragglers.prediction.likelihood import tobit_negloglik


def _observations(finished_y: np.ndarray, n_running: int, t: float) -> tuple[np.ndarray, np.ndarray]:
    fin = np.asarray(finished_y, dtype=float)
    durations = np.r_[fin, np.full(int(n_running), float(t))]
    observed = np.r_[np.ones(len(fin), bool), np.zeros(int(n_running), bool)]
    return durations, observed


def km_quantile(durations, observed, q: float) -> float:
    """The Kaplan-Meier q-quantile of latency (+inf when S stays above 1 - q)."""
    durations = np.asarray(durations, dtype=float)
    if len(durations) == 0 or not np.any(observed):
        return math.inf
    kmf = KaplanMeierFitter().fit(durations, np.asarray(observed, bool))
    return float(qth_survival_time(1.0 - q, kmf.survival_function_))


def lognormal_fit(durations, observed) -> tuple[float, float] | None:
    """(shape sigma, scale exp(mu)) of a log-normal fitted by maximum likelihood to right-censored
    data, or None with fewer than two distinct positive exact observations.

    The log-latencies are a right-censored normal sample: the censored normal likelihood of the
    Tobit fitters (``likelihood.tobit_negloglik``) with an intercept only, maximized by L-BFGS over
    (mu, log sigma) from the exact observations' mean and std. The same optimum as scipy's generic
    ``lognorm.fit`` on ``CensoredData`` with floc=0 (tested), about 10x faster: it runs at every
    checkpoint of every job.
    """
    durations = np.asarray(durations, dtype=float)
    observed = np.asarray(observed, bool)
    exact = np.log(durations[observed & (durations > 0)])
    if len(np.unique(exact)) < 2:
        return None
    right = np.log(durations[~observed & (durations > 0)])
    z = np.r_[exact, right]
    censored = np.r_[np.zeros(len(exact), bool), np.ones(len(right), bool)]
    start = np.array([exact.mean(), math.log(max(exact.std(), 1e-3))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = optimize.minimize(tobit_negloglik, start, args=(np.ones((len(z), 1)), z, censored), jac=True,
                                method="L-BFGS-B")
    mu, sigma = float(res.x[0]), float(math.exp(res.x[1]))
    if not (res.success and np.isfinite(mu) and np.isfinite(sigma) and sigma > 0):
        return None
    return sigma, math.exp(mu)


def online_threshold(finished_y, n_running: int, t: float, q: float) -> float:
    """tau_hat(t): the job's q-quantile latency as known at t (see the module doc)."""
    durations, observed = _observations(finished_y, n_running, t)
    fin = np.sort(np.asarray(finished_y, dtype=float))
    n = len(durations)
    # every censoring is at t, after every event: the KM curve is the empirical survival,
    # S(y_(i)) = (n - i) / n at the i-th smallest finished latency, so its quantile is the first
    # y_(i) with (n - i) / n <= 1 - q (equal to km_quantile's lifelines answer: tested), and it is
    # defined iff S(last event) = n_running / n <= 1 - q
    if len(fin) and np.all(fin <= t) and n_running <= (1.0 - q) * n + 1e-9:
        i = np.arange(1, len(fin) + 1)
        last_of_tie = np.r_[fin[1:] != fin[:-1], True]
        hit = np.flatnonzero(last_of_tie & ((n - i) <= (1.0 - q) * n + 1e-9))
        if len(hit):
            return float(fin[hit[0]])
    fit = lognormal_fit(durations, observed)
    if fit is None:
        return math.inf
    return max(float(t), float(stats.lognorm.ppf(q, fit[0], scale=fit[1])))


def conditional_survival(finished_y, n_running: int, t: float, x: float) -> float:
    """P(Y > x | Y > t) for a task running at t, from the tasks known at t (see the module doc).

    The Kaplan-Meier curve is used up to its largest event time; on the common clock that is
    at most t, so for x > t the answer is the log-normal tail's (NaN when it cannot be fitted).
    """
    if x <= t:
        return 1.0
    durations, observed = _observations(finished_y, n_running, t)
    if np.any(observed) and x <= durations[observed].max():
        kmf = KaplanMeierFitter().fit(durations, observed)
        s = kmf.survival_function_at_times([t, x]).to_numpy()
        return float(s[1] / s[0]) if s[0] > 0 else 0.0
    fit = lognormal_fit(durations, observed)
    if fit is None:
        return math.nan
    st = stats.lognorm.sf(t, fit[0], scale=fit[1])
    sx = stats.lognorm.sf(x, fit[0], scale=fit[1])
    return float(sx / st) if st > 0 else 1.0
