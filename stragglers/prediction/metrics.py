"""Per-job classification metrics (summaries over jobs: stragglers.reports.comparison.table3).

Conventions match scikit-learn with ``zero_division=0``: a rate whose
denominator is empty is 0 (a job always has positives: every straggler is
still running at t0).
"""

from __future__ import annotations

import numpy as np

RATES = ("tpr", "fpr", "fnr", "f1")


def confusion(labels: np.ndarray, predicted: np.ndarray) -> dict[str, int]:
    labels = np.asarray(labels, bool)
    predicted = np.asarray(predicted, bool)
    return {
        "tp": int(np.sum(labels & predicted)),
        "fp": int(np.sum(~labels & predicted)),
        "fn": int(np.sum(labels & ~predicted)),
        "tn": int(np.sum(~labels & ~predicted)),
    }


def _div(a, b):
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


def rates(tp, fp, fn, tn) -> dict[str, float | np.ndarray]:
    return {
        "tpr": _div(tp, tp + fn),
        "fpr": _div(fp, fp + tn),
        "fnr": _div(fn, tp + fn),
        "f1": _div(2 * np.asarray(tp), 2 * np.asarray(tp) + fp + fn),
    }


def job_scores(labels: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    c = confusion(labels, predicted)
    return c | {k: float(v) for k, v in rates(**c).items()}
