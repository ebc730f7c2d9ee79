"""The straggler threshold a scheduler can know at time t (the operator's protocol).

The paper hands every method the job's true p90 latency tau, known only once the job is
over. Under ``threshold="online"`` a method is given tau_hat(t) instead: the job's latency
quantile estimated from what is known at checkpoint t,

- the finished tasks' latencies (exact observations), and
- the running tasks' elapsed times (right-censored observations; on the paper's common clock
  every running task has run exactly t seconds, on the operator's wall clock each has run since
  its own start).

tau_hat(t) is the Kaplan-Meier quantile (``km_curve``: lifelines' ``KaplanMeierFitter`` arithmetic; the smallest
event time s with S(s) <= 1 - q, lifelines' ``qth_survival_time`` convention). It is
undefined while more than 1 - q of the tasks still run (S never reaches 1 - q within the
observed times): on the common clock, at every checkpoint before the true tau. The rule
there (documented in docs/EVALUATION.md): fit a log-normal distribution to the same
censored data by maximum likelihood (scipy ``lognorm.fit`` on ``CensoredData``, location 0)
and take its q-quantile, but never less than the longest elapsed time (the KM estimate says
the quantile lies beyond it; t on the common clock). With fewer than two distinct finished latencies the log-normal cannot be fitted and
tau_hat is +inf (a method that thresholds a predicted latency flags nothing).

``conditional_survival`` gives P(Y > x | Y > t) from the same estimate: the Kaplan-Meier
curve where it is defined (x <= the largest finished latency), the log-normal tail beyond.

Labels never change: a straggler is still a task whose latency is >= the true tau.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import special

from stragglers.prediction.statistics.likelihood import tobit_negloglik


def _observations(finished_y: np.ndarray, running_elapsed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    fin = np.asarray(finished_y, dtype=float)
    el = np.asarray(running_elapsed, dtype=float)
    return np.r_[fin, el], np.r_[np.ones(len(fin), bool), np.zeros(len(el), bool)]


def km_curve(durations, observed) -> tuple[np.ndarray, np.ndarray]:
    """(times, S(times)): the Kaplan-Meier survival curve, S(t) = prod_{t_j <= t} (1 - d_j / n_j)
    with d_j events and n_j at risk at t_j (Kaplan & Meier 1958), at every distinct duration and
    at 0. The arithmetic is lifelines' ``KaplanMeierFitter`` (a sum of log(n_j - d_j) - log(n_j),
    exponentiated), so the curve is the same to the bit (tested), without its per-fit tables:
    tau_hat is estimated at every decision of every job."""
    durations = np.asarray(durations, dtype=float)
    observed = np.asarray(observed, bool)
    times, at, removed = np.unique(np.r_[min(0.0, durations.min()), durations], return_inverse=True,
                                   return_counts=True)
    removed[0] -= 1                                    # the birth row (entry at time 0) is not a removal
    deaths = np.bincount(at[1:][observed], minlength=len(times)).astype(float)
    at_risk = (len(durations) - np.r_[0, np.cumsum(removed)[:-1]]).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return times, np.exp(np.cumsum(np.log(at_risk - deaths) - np.log(at_risk)))


def km_at(durations, observed, at) -> np.ndarray:
    """S at the times ``at`` (a step function: its value at the last curve time <= each; NaN
    before the curve's first time), as lifelines' ``survival_function_at_times``."""
    times, surv = km_curve(durations, observed)
    i = np.searchsorted(times, np.asarray(at, dtype=float), side="right") - 1
    return np.where(i >= 0, surv[np.maximum(i, 0)], np.nan)


def km_quantile(durations, observed, q: float) -> float:
    """The Kaplan-Meier q-quantile of latency: the first time with S <= 1 - q (lifelines'
    ``qth_survival_time`` convention), +inf when S stays above 1 - q."""
    durations = np.asarray(durations, dtype=float)
    if len(durations) == 0 or not np.any(observed):
        return math.inf
    times, surv = km_curve(durations, observed)
    if surv[-1] > 1.0 - q:
        return math.inf
    return float(times[np.searchsorted(-surv, -(1.0 - q))])


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
    from scipy import optimize   # here, not at the top: importing it costs a command that never fits (nurd-spark)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = optimize.minimize(tobit_negloglik, start, args=(np.ones((len(z), 1)), z, censored), jac=True,
                                method="L-BFGS-B")
    mu, sigma = float(res.x[0]), float(math.exp(res.x[1]))
    if not (res.success and np.isfinite(mu) and np.isfinite(sigma) and sigma > 0):
        return None
    return sigma, math.exp(mu)


#: ``fit`` not given: the functions below fit the log-normal themselves where they need it.
FIT_HERE = object()


def lognormal_sf(x, sigma: float, scale: float):
    """P(Y > x) of a log-normal of shape ``sigma`` and scale ``scale``: scipy.stats.lognorm.sf's own
    arithmetic (ndtr(-log(x / scale) / sigma)), bit for bit, without importing scipy.stats."""
    with np.errstate(divide="ignore"):
        return special.ndtr(-(np.log(np.asarray(x, dtype=float) / scale) / sigma))


def lognormal_ppf(q: float, sigma: float, scale: float) -> float:
    """The q-quantile of that log-normal: scipy.stats.lognorm.ppf's arithmetic (exp(sigma ndtri(q)) scale)."""
    return float(np.exp(sigma * special.ndtri(q)) * scale)


def online_threshold(finished_y, running_elapsed, q: float, fit=FIT_HERE) -> float:
    """tau_hat: the job's q-quantile latency as known from the finished latencies and the running
    tasks' elapsed times (see the module doc). ``fit``: ``lognormal_fit`` of the same data, where the
    caller has it."""
    durations, observed = _observations(finished_y, running_elapsed)
    fin = np.sort(np.asarray(finished_y, dtype=float))
    el = np.asarray(running_elapsed, dtype=float)
    n = len(durations)
    if len(fin) and (len(el) == 0 or fin[-1] <= el.min()):
        # every censoring after every event (the common clock): the KM curve is the empirical
        # survival, S(y_(i)) = (n - i) / n at the i-th smallest finished latency, so its quantile is
        # the first y_(i) with (n - i) / n <= 1 - q (equal to km_quantile's lifelines answer: tested),
        # and it is defined iff S(last event) = n_running / n <= 1 - q
        if len(el) <= (1.0 - q) * n + 1e-9:
            i = np.arange(1, len(fin) + 1)
            last_of_tie = np.r_[fin[1:] != fin[:-1], True]
            hit = np.flatnonzero(last_of_tie & ((n - i) <= (1.0 - q) * n + 1e-9))
            if len(hit):
                return float(fin[hit[0]])
    elif len(fin):
        # censorings among the events (tasks started at different times): lifelines' KM
        km = km_quantile(durations, observed, q)
        if math.isfinite(km):
            return km
    if fit is FIT_HERE:
        fit = lognormal_fit(durations, observed)
    if fit is None:
        return math.inf
    longest = float(durations.max()) if n else 0.0
    return max(longest, float(lognormal_ppf(q, *fit)))


def conditional_survival(finished_y, running_elapsed, t, x: float) -> np.ndarray:
    """P(Y > x | Y > t) for tasks that have run t (an array: one per task), from the finished
    latencies and the running tasks' elapsed times (see the module doc).

    The Kaplan-Meier curve is used up to its largest event time, the log-normal tail beyond (NaN
    when it cannot be fitted); 1 where x <= t.
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    out = np.ones(len(t))
    ask = t < x
    if not ask.any():
        return out
    durations, observed = _observations(finished_y, running_elapsed)
    if np.any(observed) and x <= durations[observed].max():
        s = km_at(durations, observed, np.r_[t[ask], x])
        st, sx = s[:-1], s[-1]
        out[ask] = np.where(st > 0, sx / np.where(st > 0, st, 1.0), 0.0)
        return out
    fit = lognormal_fit(durations, observed)
    if fit is None:
        out[ask] = np.nan
        return out
    st = lognormal_sf(t[ask], *fit)
    sx = lognormal_sf(x, *fit)
    out[ask] = np.where(st > 0, sx / np.where(st > 0, st, 1.0), 1.0)
    return out


def copy_cost_curve(finished_y, running_elapsed, elapsed: np.ndarray, points: int = 128, fit=FIT_HERE,
                    mean_out: list | None = None) -> np.ndarray:
    """A scheduler's expected machine time of a copy started now of a task that has run ``elapsed``
    (one per value), from the same estimate of the job's durations as tau_hat (the finished
    latencies exact, the running tasks' elapsed times censored): E[min(C, R)] with C a fresh draw of
    the job's durations (the copy) and R the original's remaining time given it has run e, C and R
    independent: the integral over u of S(u) S(e + u) / S(e). S is the Kaplan-Meier curve up to the
    largest finished latency and the log-normal tail beyond it, scaled to meet the curve there; with
    no log-normal fit, S holds its last value up to the longest elapsed time and is 0 beyond. A copy
    of a task about to end costs little, one of a straggler about a typical task's time. NaN when no
    task has finished. ``fit``: ``lognormal_fit`` of the same data, where the caller has it;
    ``mean_out``: a list the mean duration under the same estimate (the integral of S) is appended to."""
    durations, observed = _observations(finished_y, running_elapsed)
    elapsed = np.asarray(elapsed, dtype=float)
    if not np.any(observed):
        return np.full(len(elapsed), np.nan)
    times, surv = km_curve(durations, observed)
    last = float(durations[observed].max())
    s_last = float(surv[np.searchsorted(times, last, side="right") - 1])
    if s_last <= 0:
        fit = None
    elif fit is FIT_HERE:
        fit = lognormal_fit(durations, observed)
    longest = float(durations.max())
    if fit is not None:
        top = max(float(lognormal_ppf(0.999, *fit)), longest, last)
    else:
        top = max(longest, last)
    u = np.r_[0.0, np.geomspace(max(min(last, top) * 1e-3, 1e-6), 2 * top + elapsed.max(initial=0.0), points)]

    def S(x: np.ndarray) -> np.ndarray:
        i = np.searchsorted(times, x, side="right") - 1
        out = np.where(i >= 0, surv[np.maximum(i, 0)], 1.0)
        beyond = x > last
        if fit is not None:
            tail = lognormal_sf(x[beyond], *fit) / max(lognormal_sf(last, *fit),
                                                                            1e-300)
            out[beyond] = s_last * np.minimum(tail, 1.0)
        else:
            out[beyond] = np.where(x[beyond] <= longest, s_last, 0.0)
        return out

    s_u = S(u)
    if mean_out is not None:
        mean_out.append(float(np.trapezoid(s_u, u)))
    s_e = S(elapsed)
    joint = S(elapsed[:, None] + u[None, :]).reshape(len(elapsed), len(u))
    with np.errstate(divide="ignore", invalid="ignore"):
        integrand = np.where(s_e[:, None] > 0, s_u[None, :] * joint / s_e[:, None], 0.0)
    return np.trapezoid(integrand, u, axis=1)
