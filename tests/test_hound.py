"""Hound (stragglers/diagnosis): learners, meta learning, ensemble, naming on
hand-made data with known answers; the Dagster assets on a small generated trace."""

import numpy as np
import pytest

from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.learners import (AdaBoostIPW, BaggedElasticNet, SignedSchweizerWolff,
                                           absolute_sum_one, signed_schweizer_wolff)


def _driven(seed=3, n=300):
    """Metric 0 drives latency up, metric 1 drives it down, metric 2 is noise (shuffled)."""
    rng = np.random.default_rng(seed)
    X = rng.lognormal(0.0, 0.5, size=(n, 3))
    y = 100 + 40 * X[:, 0] - 25 * X[:, 1] + rng.normal(0, 5, n)
    X[:, 2] = rng.permutation(X[:, 2])
    return X, y


@pytest.mark.parametrize("learner", [BaggedElasticNet(replicas=10), SignedSchweizerWolff(), AdaBoostIPW(rounds=20)],
                         ids=lambda l: l.name)
def test_learner_finds_the_driver_with_its_sign(learner):
    X, y = _driven()
    c = learner.profile(X, y)
    assert np.isclose(np.abs(c).sum(), 1.0)
    assert np.all(np.abs(c) <= 1.0)
    assert np.argmax(np.abs(c)) == 0 and c[0] > 0        # the strongest driver, positive
    assert c[1] < 0                                        # the negative driver keeps its sign
    assert abs(c[2]) < 0.1                                 # the shuffled metric gets ~0


def test_ssw_known_answers():
    rng = np.random.default_rng(0)
    x = rng.normal(size=500)
    assert signed_schweizer_wolff(x, -x) == pytest.approx(-1.0, abs=1e-9)
    assert signed_schweizer_wolff(x, np.exp(x)) == pytest.approx(1.0, abs=1e-9)   # invariant to increasing maps
    g = SignedSchweizerWolff().grid(500)
    assert signed_schweizer_wolff(x, -x**3, grid=g) < -0.95                          # sampled grid
    # independent pairs: the sign test answers 0 in most draws, and |SSW| stays small
    vals = [signed_schweizer_wolff(rng.normal(size=500), rng.normal(size=500), grid=g) for _ in range(30)]
    assert np.mean(np.array(vals) == 0.0) >= 0.5
    assert np.max(np.abs(vals)) < 0.2


def test_ssw_hand_computed():
    # x = (1, 2, 3), y = (1, 3, 2): ranks (1,1), (2,3), (3,2); u, v on the grid (1/3, 2/3, 1).
    # Empirical copula C = [[1,1,1],[1,1,2],[1,2,3]] / 3, u v = [[1,2,3],[2,4,6],[3,6,9]] / 9:
    # sum |C - u v| = 5/9 -> SWD = 12 / (9 - 1) * 5/9 = 5/6.
    # L1 = mean(min(u, v) - C) = (1/3) / 9 = 1/27, L2 = mean(C - max(u + v - 1, 0)) = 1 / 9 = 3/27:
    # L2 - L1 = 2/27 = 0.074 -> sign +1 for eps < 2/27, 0 above.
    assert signed_schweizer_wolff([1, 2, 3], [1, 3, 2], sign_tol=0.0) == pytest.approx(5 / 6)
    assert signed_schweizer_wolff([1, 2, 3], [1, 3, 2], sign_tol=0.07) == pytest.approx(5 / 6)
    assert signed_schweizer_wolff([1, 2, 3], [1, 3, 2], sign_tol=0.08) == 0.0


def test_absolute_sum_one_and_empty():
    assert np.allclose(absolute_sum_one([2.0, -2.0, 0.0]), [0.5, -0.5, 0.0])
    assert np.all(absolute_sum_one([0.0, 0.0]) == 0.0)


def test_settings_reject_bad_values():
    from stragglers.settings import SettingError
    with pytest.raises(SettingError, match="hound_min_tasks"):
        HoundSettings(min_tasks=1)
