"""Faster drop-in detectors give PyOD's own answers (docs/BENCHMARKS.md, "Method cost")."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pyod.models.sos import SOS

from stragglers.prediction.methods.outliers import BatchedSOS


def _scores(cls, X: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return cls(contamination=0.1).fit(X).decision_scores_


@pytest.mark.parametrize("case", ["distinct", "zeros", "far"])
def test_batched_sos_equals_pyod_sos(case):
    X = np.random.default_rng(7).random((80, 4))
    if case == "zeros":
        X[:20] = 0.0            # 20 identical rows > perplexity 4.5: no row can reach it -> NaN in PyOD
    if case == "far":
        X *= 1e3                # exp(-D beta) underflows at beta = 1: the search first halves beta
    pyod, batched = _scores(SOS, X), _scores(BatchedSOS, X)
    assert np.array_equal(np.isnan(pyod), np.isnan(batched))
    np.testing.assert_allclose(batched, pyod, rtol=1e-9, atol=0, equal_nan=True)
    if case == "distinct":
        assert np.isfinite(batched).all()


def test_batched_sos_unreachable_perplexity_as_pyod():
    # row 0 has 6 points at the same positive distance 1 (> perplexity 4.5 ties): its entropy
    # is >= log 6 > log 4.5 for every beta, PyOD's search runs its 5000 steps; same result
    X = np.vstack([[0.0, 0.0], np.eye(2), -np.eye(2), [[0.6, 0.8], [-0.6, -0.8]],
                   np.random.default_rng(1).random((20, 2)) + 3.0])
    pyod, batched = _scores(SOS, X), _scores(BatchedSOS, X)
    np.testing.assert_allclose(batched, pyod, rtol=1e-9, atol=0, equal_nan=True)


def test_batched_sos_perplexity_by_hand():
    # 4 points on a line at 0, 1, 3, 6 with perplexity 2: each row's beta solves
    # H(beta) = log 2, H = log(sum a) + beta sum(d a) / sum(a), a = exp(-beta d)
    # (SOS, Janssens et al. 2012, eq. 5-6), to the tolerance eps = 1e-5.
    X = np.array([[0.0], [1.0], [3.0], [6.0]])
    det = BatchedSOS(contamination=0.1, perplexity=2.0)
    A = det._d2a(det._x2d(X))
    for i in range(4):
        d = np.abs(X[:, 0] - X[i, 0])[np.arange(4) != i]
        a = A[i, np.arange(4) != i]
        beta = -np.log(a[0]) / d[0]
        H = np.log(a.sum()) + beta * (d * a).sum() / a.sum()
        assert H == pytest.approx(np.log(2.0), abs=1e-5)
        assert A[i, i] == 0.0
