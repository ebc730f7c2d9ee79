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
    np.testing.assert_array_equal(batched, pyod)        # bit for bit, NaN where PyOD has NaN
    if case == "distinct":
        assert np.isfinite(batched).all()


def test_batched_sos_unreachable_perplexity_as_pyod():
    # row 0 has 6 points at the same positive distance 1 (> perplexity 4.5 ties): its entropy
    # is >= log 6 > log 4.5 for every beta, PyOD's search runs its 5000 steps; same result
    X = np.vstack([[0.0, 0.0], np.eye(2), -np.eye(2), [[0.6, 0.8], [-0.6, -0.8]],
                   np.random.default_rng(1).random((20, 2)) + 3.0])
    pyod, batched = _scores(SOS, X), _scores(BatchedSOS, X)
    np.testing.assert_array_equal(batched, pyod)


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


def test_batched_sos_affinities_use_pyods_exp_and_sums():
    # The case the replay turned up: 3 points at 0, 1, 3 with perplexity 2. Row 0's search
    # (d = 1, 3) ends at a beta where numpy's vectorised exp and the scalar exp PyOD's numba
    # code calls differ in the last bit for about 1 argument in 20 on this machine (AVX-512);
    # an earlier numpy version of BatchedSOS was off by that ulp. The affinities must be
    # exp(-d beta) as PyOD computes them, row by row: compare each row with PyOD's
    # _get_perplexity at the beta read back from the row, and the whole matrix with PyOD's.
    from pyod.models.sos import _get_perplexity
    X = np.array([[0.0], [1.0], [3.0]])
    det, ref = BatchedSOS(contamination=0.1, perplexity=2.0), SOS(contamination=0.1, perplexity=2.0)
    D = det._x2d(X)
    A = det._d2a(D)
    np.testing.assert_array_equal(A, ref._d2a(D))
    for i in range(3):
        d = D[i, np.arange(3) != i]
        # the nearest point's affinity is exp(-d0 beta): beta = -log(a0) / d0 up to rounding;
        # PyOD's bisection steps are dyadic, so round to the grid it lives on (2^-30)
        beta = np.round(-np.log(A[i, np.arange(3) != i][0]) / d[0] * 2**30) / 2**30
        H, a = _get_perplexity(d, np.array([beta]))
        assert abs(H[0] - np.log(2.0)) <= det.eps
        np.testing.assert_array_equal(A[i, np.arange(3) != i], a)


def test_batched_sos_replay_flags_equal_pyod():
    # Through the replay, as the evaluation runs it: the 9 slowest tasks sit at the centre
    # (0.5, ..., 0.5) and at 0.5 +- 0.25 on each of the 4 axes (dyadic: distances exact), so
    # the centre has 8 points tied at 0.25 (more ties than the perplexity 4.5: one of PyOD's
    # 5000-step rows) at every checkpoint, in the fit and in the candidates scored among
    # themselves. Same flag times and fallbacks as PyOD's SOS.
    from stragglers.prediction.replay import simulate
    from stragglers.prediction.methods.outliers import SOSMethod
    rng = np.random.default_rng(3)
    n, d, K = 60, 4, 4
    lat = 100.0 * (1.0 + 3.0 * rng.random(n) ** 2)
    tau, t0 = float(np.quantile(lat, 0.9)), float(np.quantile(lat, 0.3))
    cps = np.linspace(t0, tau * 0.99, K)
    X = np.stack([rng.random((n, d)) for _ in cps])
    X[:, np.argsort(lat)[-9:]] = 0.5 + 0.25 * np.vstack([np.zeros(d), np.eye(d), -np.eye(d)])
    job = simulate.JobData(job_id=1, task_ids=np.arange(n, dtype=np.int64), latency=lat, checkpoints=cps,
                           X=X, tau=tau, feature_names=tuple(f"f{j}" for j in range(d)))

    class PyODSOSMethod(SOSMethod):
        pyod_class = SOS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, pyod = simulate.replay_job(job, SOSMethod()), simulate.replay_job(job, PyODSOSMethod())
    np.testing.assert_array_equal(ours.variants[0].flagged_at, pyod.variants[0].flagged_at)
    assert ours.fallbacks == pyod.fallbacks
    assert len(pyod.fallbacks) < K - 1                        # it did fit and score somewhere
