"""The NURD authors' per-job loop (code/run_ts.py style), re-implemented on this warehouse: side (ii)
of benchmarks/evaluate.py (its docstring says what is measured against what)."""

from __future__ import annotations

import time

import numpy as np


def authors_job(con, job_id: int, features: tuple[str, ...], seed: int = 42,
                alpha: float = 0.5, eps: float = 0.05) -> dict:
    """One job, the authors' way: per-task DataFrames, row-by-row assembly, refit per checkpoint."""
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.linear_model import LogisticRegression
    from stragglers.prediction.replay.metrics import job_scores
    started, started_cpu = time.perf_counter(), time.process_time()
    cp = con.execute("SELECT k, checkpoint_s, t0_s, tau_s FROM job_checkpoints WHERE trace = 'synthetic' "
                     "AND job_id = ? ORDER BY k", [job_id]).df()
    lat = con.execute("SELECT task_id, latency_s FROM tasks WHERE trace = 'synthetic' AND job_id = ? "
                      "ORDER BY task_id", [job_id]).df()
    df = con.execute("SELECT * FROM checkpoint_features WHERE trace = 'synthetic' AND job_id = ? "
                     "ORDER BY task_id, k", [job_id]).df()
    tau, t0 = float(cp.tau_s.iloc[0]), float(cp.t0_s.iloc[0])
    # one DataFrame per task, as the authors' one-file-per-task time series
    list_task = [g.reset_index(drop=True) for _, g in df.groupby("task_id", sort=True)]
    latency = lat.latency_s.tolist()
    n = len(list_task)
    scored = [y > t0 for y in latency]
    variants = ("nurd", "nurd_nc", "gbtr")
    flagged = {v: [False] * n for v in variants}
    flagged_at = [None] * n
    delta = None
    for k in range(len(cp)):
        t = float(cp.checkpoint_s.iloc[k])
        X_train, y_train, X_run, run_idx = [], [], [], []
        for i, task in enumerate(list_task):
            row = task.iloc[k]
            x = [row[c] for c in features]
            if latency[i] <= t:
                X_train.append(x)
                y_train.append(latency[i])
            else:
                X_run.append(x)
                run_idx.append(i)
        if k == 0:
            c_f, c_r = np.mean(np.asarray(X_train), axis=0), np.mean(np.asarray(X_run), axis=0)
            gap = float(np.sum((c_r - c_f) ** 2))
            rho = float(np.sum(c_f ** 2)) / gap if gap > 0 else np.inf
            delta = 1.0 / (1.0 + rho) - alpha
            continue
        # candidates: running, scored, not yet flagged by at least one variant (as the engine)
        cand = [j for j, i in enumerate(run_idx)
                if scored[i] and not all(flagged[v][i] for v in variants)]
        if not cand or len(X_train) < 2 or not X_run:
            continue
        reg = GradientBoostingRegressor(random_state=seed).fit(np.asarray(X_train), np.asarray(y_train))
        Xp = np.asarray(X_train + X_run)
        yp = np.asarray([1] * len(X_train) + [0] * len(X_run))
        clf = LogisticRegression(random_state=seed, solver="lbfgs").fit(Xp, yp)
        Xc = np.asarray([X_run[j] for j in cand])
        y_hat = reg.predict(Xc)
        z = clf.predict_proba(Xc)[:, 1]
        for j, yh, zz in zip(cand, y_hat.tolist(), z.tolist()):
            i = run_idx[j]
            w = max(eps, min(zz + delta, 1.0))
            if yh / w >= tau:
                if not flagged["nurd"][i]:
                    flagged_at[i] = t
                flagged["nurd"][i] = True
            if yh / max(eps, zz) >= tau:
                flagged["nurd_nc"][i] = True
            if yh >= tau:
                flagged["gbtr"][i] = True
    labels = np.array([y >= tau for y in latency])
    s = np.array(scored)
    f1 = {v: job_scores(labels[s], np.array(flagged[v])[s])["f1"] for v in variants}
    times = {int(tid): flagged_at[i] for i, tid in enumerate(lat.task_id) if scored[i]}
    return {"f1": f1["nurd"], "f1_by_variant": f1, "seconds": time.perf_counter() - started,
            "cpu_seconds": time.process_time() - started_cpu,
            "flagged_at": times}
