"""Small JobData builders for simulator tests (features correlate with latency)."""

from __future__ import annotations

import numpy as np

from stragglers.prediction.replay.simulate import JobData


def make_job(job_id: int = 1, n: int = 150, d: int = 5, step: float = 300.0, seed: int = 0) -> JobData:
    rng = np.random.default_rng(seed)
    slow = rng.lognormal(0, 0.5, n)
    latency = np.round(600 + 1500 * slow, 3)
    tau = float(np.quantile(latency, 0.9))
    t0 = float(np.sort(latency)[int(np.ceil(0.04 * n)) - 1])
    checkpoints = np.arange(t0, tau, step)
    base = rng.normal(size=(n, d)) + slow[:, None] * np.linspace(1, 0, d)
    X = np.empty((len(checkpoints), n, d))
    for k, t in enumerate(checkpoints):
        seen = np.minimum(t, latency) / latency
        raw = base * (0.5 + 0.5 * seen[:, None]) + 0.1 * rng.normal(size=(n, d))
        X[k] = (raw - raw.min(0)) / (raw.max(0) - raw.min(0))
    return JobData(job_id=job_id, task_ids=np.arange(n, dtype=np.int64), latency=latency,
                   checkpoints=checkpoints, X=X, tau=tau, feature_names=tuple(f"f{i}" for i in range(d)))
