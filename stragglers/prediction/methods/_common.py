"""Small helpers shared by the baseline methods (not a method themselves)."""

from __future__ import annotations

import contextlib
import warnings
from typing import Iterator

import numpy as np

from stragglers.prediction.methods.base import DEGENERATE_DATA_ERRORS, CannotFit

FIT_ERRORS = DEGENERATE_DATA_ERRORS


@contextlib.contextmanager
def cannot_fit_on_error(what: str) -> Iterator[None]:
    """Turn a library failure inside the block into ``CannotFit``."""
    try:
        yield
    except CannotFit:
        raise
    except FIT_ERRORS as exc:  # degenerate data, recorded by the simulator
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise CannotFit(f"{what}: {type(exc).__name__}: {msg[:200]}") from exc


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence library chatter (runtime/convergence warnings) inside a fit.

    Where a warning means the result is unusable the caller checks the result
    itself (finite scores, convergence flag) and raises ``CannotFit``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            yield


def subsample(n: int, max_n: int | None, rng: np.random.Generator) -> np.ndarray:
    """Row indices: all rows if n <= max_n, else a sorted seeded sample of max_n."""
    if max_n is None or n <= max_n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=int(max_n), replace=False))


def nonconstant_columns(X: np.ndarray) -> np.ndarray:
    """Boolean mask of the columns of X that are not constant (ptp > 0)."""
    if len(X) == 0:
        return np.zeros(X.shape[1], dtype=bool)
    return np.ptp(X, axis=0) > 0


def require_finite(a: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if not np.all(np.isfinite(a)):
        raise CannotFit(f"{what}: non-finite values ({int(np.sum(~np.isfinite(a)))} of {a.size})")
    return a


def job_rng(seed: int, salt: int = 0) -> np.random.Generator:
    """Generator derived from the per-job seed (salt separates independent uses)."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, int(salt)])


def int_seed(seed: int) -> int:
    """A 31-bit int seed for libraries that take ``random_state``."""
    return int(seed) % (2**31 - 1)
