"""The 9 candidate distributions of Ouyang et al. (SCC 2016, Section III-C), fitted by
maximum likelihood (scipy.stats) and ranked by the Anderson-Darling statistic.

The AD statistic is computed from the fitted CDF with the standard formula
(Anderson and Darling 1954; Stephens, JASA 69(347), 1974, Eq. 3):

    A^2 = -n - (1/n) * sum_{i=1..n} (2i - 1) * [ln F(x_(i)) + ln(1 - F(x_(n+1-i)))]

which is what scipy.stats.anderson computes for the distributions it knows
(tests/test_nodes.py checks the normal case against it). scipy has no AD for
the 3-parameter families, hence one formula for all.

The paper used Minitab's names. "2-parameter exponential" is expon with a free
location; "Loglogistic" (2 parameters) is fisk with location 0, which only
exists for positive data: z-scores are centred on 0, so on a node with any
z <= 0 it is reported as not fitted (NaN), as Minitab does for its 2-parameter
families on non-positive data.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Candidate:
    name: str                        # the paper's name
    dist: stats.rv_continuous
    fixed: tuple[tuple[str, float], ...] = ()   # fixed parameters of scipy's fit (e.g. floc=0)
    positive_only: bool = False


CANDIDATES: tuple[Candidate, ...] = (
    Candidate("3-parameter lognormal", stats.lognorm),
    Candidate("normal", stats.norm),
    Candidate("2-parameter exponential", stats.expon),
    Candidate("3-parameter Weibull", stats.weibull_min),
    Candidate("smallest extreme value", stats.gumbel_l),
    Candidate("largest extreme value", stats.gumbel_r),
    Candidate("3-parameter gamma", stats.gamma),
    Candidate("log-logistic", stats.fisk, (("floc", 0.0),), positive_only=True),
    Candidate("3-parameter log-logistic", stats.fisk),
)
LOGLOGISTIC3 = "3-parameter log-logistic"
_BY_NAME = {c.name: c for c in CANDIDATES}


def anderson_darling(x: np.ndarray, cdf) -> float:
    """A^2 of sample ``x`` against the continuous CDF ``cdf`` (Stephens 1974, Eq. 3)."""
    x = np.sort(np.asarray(x, dtype=float))
    n = len(x)
    if n < 2:
        raise ValueError("the Anderson-Darling statistic needs at least 2 observations")
    # clip: a fitted CDF can be exactly 0 or 1 at the sample's extremes (bounded support)
    f = np.clip(cdf(x), 1e-300, 1 - 1e-16)
    i = np.arange(1, n + 1)
    return float(-n - np.sum((2 * i - 1) * (np.log(f) + np.log1p(-f[::-1]))) / n)


def fit(candidate: Candidate | str, x: np.ndarray):
    """The frozen scipy distribution fitted to ``x`` (None where it cannot be fitted)."""
    c = _BY_NAME[candidate] if isinstance(candidate, str) else candidate
    x = np.asarray(x, dtype=float)
    if c.positive_only and np.any(x <= 0):
        return None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            params = c.dist.fit(x, **dict(c.fixed))
        except (ValueError, RuntimeError, FloatingPointError):
            return None
    if not np.all(np.isfinite(params)):
        return None
    return c.dist(*params)


def rank_candidates(x: np.ndarray) -> list[tuple[str, float, tuple]]:
    """Every candidate's (name, A^2, fitted parameters), best (smallest A^2) first;
    candidates that cannot be fitted come last with A^2 = NaN."""
    rows = []
    for c in CANDIDATES:
        frozen = fit(c, x)
        if frozen is None:
            rows.append((c.name, float("nan"), ()))
            continue
        with np.errstate(all="ignore"):
            a2 = anderson_darling(x, frozen.cdf)
        rows.append((c.name, a2 if np.isfinite(a2) else float("nan"), tuple(float(p) for p in frozen.args)))
    return sorted(rows, key=lambda r: (np.isnan(r[1]), r[1]))
