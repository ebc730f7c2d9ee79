"""Per-job classification metrics and their summaries over jobs.

Conventions match scikit-learn with ``zero_division=0``: a rate whose
denominator is empty is 0 (a job always has positives: every straggler is
still running at t0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

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


def summarize(job_metrics: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0,
              by: tuple[str, ...] = ("trace", "method")) -> pd.DataFrame:
    """Mean over jobs (as the paper) and pooled (micro) rates, each with a
    95% percentile bootstrap interval over jobs (seeded, jobs resampled with
    replacement)."""
    rows = []
    for key, g in job_metrics.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rng = np.random.default_rng(seed)
        n = len(g)
        idx = rng.integers(0, n, size=(n_boot, n))
        row = dict(zip(by, key)) | {"n_jobs": n}
        for r in RATES:
            v = g[r].to_numpy(float)
            boot = v[idx].mean(axis=1)
            row[r] = v.mean()
            row[f"{r}_lo"], row[f"{r}_hi"] = np.quantile(boot, [0.025, 0.975])
        counts = {c: g[c].to_numpy(float) for c in ("tp", "fp", "fn", "tn")}
        pooled = rates(*(counts[c].sum() for c in ("tp", "fp", "fn", "tn")))
        boot_pooled = rates(*(counts[c][idx].sum(axis=1) for c in ("tp", "fp", "fn", "tn")))
        for r in RATES:
            row[f"pooled_{r}"] = float(pooled[r])
            row[f"pooled_{r}_lo"], row[f"pooled_{r}_hi"] = np.quantile(boot_pooled[r], [0.025, 0.975])
        rows.append(row)
    return pd.DataFrame(rows)
