"""Per-job classification metrics, and their summary over jobs with bootstrap intervals (``table3``).

Conventions match scikit-learn with ``zero_division=0``: a rate whose
denominator is empty is 0 (a job always has positives: every straggler is
still running at t0).
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from stragglers.prediction.methods import VARIANTS

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


# --------------------------------------------------------------------------- summaries over jobs
def method_sort_key(methods: pd.Series) -> pd.Series:
    """The registry's order (the paper's tables) first, unknown methods after (alphabetically)."""
    pos = {m: i for i, m in enumerate(VARIANTS)}
    return methods.map(lambda m: (pos.get(m, len(pos)), str(m)))


def sort_by_method(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    keys = [c for c in by if c != "method"]
    tmp = df.assign(_m=method_sort_key(df["method"]))
    cols = [*keys[:1], "_m", *keys[1:]] if keys else ["_m"]
    return tmp.sort_values(cols, kind="mergesort").drop(columns="_m").reset_index(drop=True)


def _group_rng(seed: int, trace: str, method: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(str(trace).encode()), zlib.crc32(str(method).encode())])


def _boot_counts(rng: np.random.Generator, n_jobs: int, n_boot: int, chunk: int = 200):
    """Yield (b, n_jobs) resample-count matrices, n_boot rows in all."""
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        idx = rng.integers(0, n_jobs, size=(b, n_jobs)) + (np.arange(b) * n_jobs)[:, None]
        yield np.bincount(idx.ravel(), minlength=b * n_jobs).reshape(b, n_jobs).astype(float)
        done += b


def _weighted_nanmean(counts: np.ndarray, vals: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(vals)
    num = counts @ np.where(ok, vals, 0.0)
    den = counts @ ok.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def _pooled(tp, fp, fn, tn) -> dict[str, np.ndarray]:
    """Pooled rates from summed counts, with the per-job convention (stragglers.prediction.replay.metrics)."""
    return rates(tp, fp, fn, tn)


def table3(job_metrics_df: pd.DataFrame, n_boot: int = 1000, seed: int = 0,
           level: float = 0.95) -> pd.DataFrame:
    """Per (trace, method): mean metrics over jobs with bootstrap intervals.

    Columns: trace, method, n_jobs, then for each of tpr, fpr, fnr, f1 the
    mean and ``<m>_lo`` / ``<m>_hi``; if tp, fp, fn, tn are present, the same
    for pooled (micro) figures as ``pooled_<m>`` (+ ``_lo``/``_hi``); ``best_f1``.
    """
    need = {"trace", "method", "job_id", *RATES}
    missing = need - set(job_metrics_df.columns)
    if missing:
        raise ValueError(f"job_metrics_df lacks columns {sorted(missing)}")
    has_counts = {"tp", "fp", "fn", "tn"} <= set(job_metrics_df.columns)
    # earliness (f1_auc, median_lead) where the evaluation recorded it; NaN-skipping like the rates
    per_job = (*RATES, *(m for m in EARLINESS if m in job_metrics_df.columns))
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    rows = []
    for (trace, method), g in job_metrics_df.groupby(["trace", "method"], sort=False):
        vals = g[list(per_job)].to_numpy(dtype=float)
        row: dict = {"trace": trace, "method": method, "n_jobs": int(g["job_id"].nunique())}
        with np.errstate(invalid="ignore"):
            means = np.array([np.nanmean(c) if np.any(~np.isnan(c)) else np.nan for c in vals.T])
        if has_counts:
            cnt = g[["tp", "fp", "fn", "tn"]].to_numpy(dtype=float)
            pooled = _pooled(*cnt.sum(axis=0))
        boots, boots_pooled = [], []
        if n_boot > 0 and len(g) > 0:
            for counts in _boot_counts(_group_rng(seed, trace, method), len(g), n_boot):
                boots.append(_weighted_nanmean(counts, vals))
                if has_counts:
                    s = counts @ cnt
                    pm = _pooled(s[:, 0], s[:, 1], s[:, 2], s[:, 3])
                    boots_pooled.append(np.column_stack([pm[m] for m in RATES]))
        B = np.concatenate(boots) if boots else np.full((1, len(per_job)), np.nan)
        for k, m in enumerate(per_job):
            row[m] = means[k]
            lo, hi = _nanpercentile(B[:, k], q)
            row[f"{m}_lo"], row[f"{m}_hi"] = lo, hi
        if has_counts:
            BM = np.concatenate(boots_pooled) if boots_pooled else np.full((1, len(RATES)), np.nan)
            for k, m in enumerate(RATES):
                row[f"pooled_{m}"] = float(pooled[m])
                lo, hi = _nanpercentile(BM[:, k], q)
                row[f"pooled_{m}_lo"], row[f"pooled_{m}_hi"] = lo, hi
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    best = out.groupby("trace")["f1"].transform("max")
    out["best_f1"] = (out["f1"] == best) & out["f1"].notna()
    return sort_by_method(out, ["trace", "method"])


def _nanpercentile(x: np.ndarray, q) -> tuple[float, float]:
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return np.nan, np.nan
    lo, hi = np.percentile(x, q)
    return float(lo), float(hi)
