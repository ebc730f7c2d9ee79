"""Per-job classification metrics (summaries over jobs: stragglers.reports.comparison.table3).

Conventions match scikit-learn with ``zero_division=0``: a rate whose
denominator is empty is 0 (a job always has positives: every straggler is
still running at t0).
"""

from __future__ import annotations

import numpy as np

RATES = ("tpr", "fpr", "fnr", "f1")
EARLINESS = ("f1_auc", "median_lead")


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


def f1_auc(f1_over_time: np.ndarray) -> float:
    """Mean of a job's F1 at normalized times k/10, k = 1..10 (the area under
    its F1-over-time step curve): a flag raised at or before the k/10 point counts from k
    on; on the 'equal' grid checkpoint j is the j/10 point, so a flag at the last checkpoint
    before tau (j = 9) counts at k = 9 and 10."""
    return float(np.mean(f1_over_time))


def median_lead(labels: np.ndarray, flagged_at: np.ndarray, latency: np.ndarray, tau: float) -> float:
    """Median over true positives of (latency - flagged_at) / tau: the share of
    the threshold a straggler still had to run when it was flagged. NaN when
    the job has no true positive."""
    hit = np.asarray(labels, bool) & ~np.isnan(flagged_at)
    if not hit.any():
        return float("nan")
    return float(np.median((latency[hit] - flagged_at[hit]) / tau))
