"""The straggler threshold a scheduler can know at time t (the operator's protocol, issue 26).

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
from scipy import stats


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
    """(shape sigma, scale exp(mu)) of a log-normal fitted to right-censored data, or None
    with fewer than two distinct positive exact observations."""
    durations = np.asarray(durations, dtype=float)
    observed = np.asarray(observed, bool)
    exact = durations[observed & (durations > 0)]
    if len(np.unique(exact)) < 2:
        return None
    right = durations[~observed & (durations > 0)]
    data = stats.CensoredData(uncensored=exact, right=right) if len(right) else exact
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        shape, _, scale = stats.lognorm.fit(data, floc=0)
    if not (np.isfinite(shape) and np.isfinite(scale) and shape > 0 and scale > 0):
        return None
    return float(shape), float(scale)


def online_threshold(finished_y, n_running: int, t: float, q: float) -> float:
    """tau_hat(t): the job's q-quantile latency as known at t (see the module doc)."""
    durations, observed = _observations(finished_y, n_running, t)
    tau_km = km_quantile(durations, observed, q)
    if math.isfinite(tau_km):
        return tau_km
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
