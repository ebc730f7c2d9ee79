"""Cheaper NURD regressors: CPU time, F1 and agreement with the current model, both protocols.

    python -m benchmarks.nurd_candidates [--work-dir /tmp/nurd-bench-eval] [--out results.json]
    python -m benchmarks.nurd_candidates --profile    # where the current model's fit time goes

On the embedded synthetic trace (generate_google seed 2011, 48 jobs, 8 parts; the warehouse
benchmarks/evaluate.py builds, plus one built with ``feature_mode='reference'`` for the
authors' protocol). For every candidate set of XGBoost parameters (each replaces the named
entries of ``nurd.XGBOOST_DEFAULTS`` for the run), ``evaluate(['nurd'])`` runs in this process
(one worker, one BLAS thread) on a copy of the warehouse, under

- ``ours``: this pipeline's protocol (the default settings);
- ``authors+xgb``: the ``NURD_PROTOCOL=authors`` preset with ``regressor='xgboost'`` (the preset
  itself uses scikit-learn's GBR, which none of the candidates changes: its F1 is the same for
  every candidate by construction, so the XGBoost candidates are compared under the rest of the
  authors' protocol).

Reported per candidate and protocol: CPU seconds of the replay (``time.process_time`` around
``evaluate``), mean F1 of NURD / NURD-NC / GBTR over the jobs, and the share of evaluated tasks
whose NURD flag time is the same as with the current defaults. Candidates are fixed in
CANDIDATES below, written before any was run; none is chosen by its F1.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

# name -> the XGBoost parameters replaced (the rest as nurd.XGBOOST_DEFAULTS)
CANDIDATES: dict[str, dict] = {
    "before (100 rounds, lr 0.1, 64 bins)": {"n_estimators": 100, "learning_rate": 0.1},
    "current (20 rounds, lr 0.5, 64 bins)": {},
    "100 rounds, 16 bins": {"max_bin": 16},
    "50 rounds, lr 0.2": {"n_estimators": 50, "learning_rate": 0.2},
    "25 rounds, lr 0.4": {"n_estimators": 25, "learning_rate": 0.4},
    "10 rounds, lr 0.7": {"n_estimators": 10, "learning_rate": 0.7},
    "20 rounds, lr 0.5, 16 bins": {"n_estimators": 20, "learning_rate": 0.5, "max_bin": 16},
    # warm start: the first fit of a job as the default, then the previous checkpoint's booster
    # continued with `warm_rounds` new rounds on the new training set (xgb_model= in xgb.train)
    "20 rounds, lr 0.5; then +5 rounds on the previous booster": {"warm_rounds": 5},
    "20 rounds, lr 0.5; then +2 rounds on the previous booster": {"warm_rounds": 2},
}


class WarmBoosterFit:
    """BoosterFit continued from the previous checkpoint's booster (candidate, not the model)."""

    def __init__(self, model, previous, rounds: int) -> None:
        self.params, self.max_bin = model.get_xgb_params(), model.get_xgb_params().get("max_bin")
        self.rounds = model.n_estimators if previous is None else rounds
        self.previous, self.booster = previous, None

    def fit(self, X, y):
        import xgboost as xgb
        data = xgb.QuantileDMatrix(X, label=y, nthread=self.params.get("n_jobs"), max_bin=self.max_bin)
        booster = xgb.Booster(self.params, [data], model_file=self.previous)
        start = 0 if self.previous is None else self.previous.num_boosted_rounds()
        for i in range(start, start + self.rounds):
            booster.update(data, i)
        self.booster = booster
        return self

    def predict(self, X):
        return self.booster.inplace_predict(X)


def warm_fit(rounds: int):
    """NurdFamily.fit with the regressor continued from the job's previous fit."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from stragglers.prediction.methods import nurd

    def fit(self, finished, running, t):
        if len(finished) < 2:
            raise nurd.CannotFit(f"{len(finished)} finished task(s): nothing to regress on")
        if len(running) == 0:
            raise nurd.CannotFit("no running task: the propensity model has one class")
        h = nurd.make_regressor(self.regressor, self.job.seed, **self.regressor_params)
        previous = getattr(self, "_previous_booster", None)
        if previous is not None and getattr(self, "_previous_job", None) != self.job.job_id:
            previous = None
        self.h = WarmBoosterFit(h, previous, rounds).fit(finished.X, finished.y)
        self._previous_booster, self._previous_job = self.h.booster, self.job.job_id
        X = np.vstack([finished.X, running.X])
        s = np.r_[np.ones(len(finished)), np.zeros(len(running))]
        self.g = LogisticRegression(solver=nurd.PROPENSITY_SOLVER, max_iter=self.propensity_max_iter).fit(X, s)
    return fit


def reference_warehouse(work: Path) -> Path:
    """The embedded trace's warehouse with the authors' feature mode (normalized by the final row)."""
    import duckdb
    from benchmarks.evaluate import embedded_warehouse
    from stragglers.settings import SelectionSettings
    from stragglers.warehouse.assemble import build_warehouse
    from stragglers.warehouse.storage import configure
    embedded_warehouse(work)                                # generates the raw trace if needed
    db = work / "eval_reference.duckdb"
    if not db.exists():
        tmp = db.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        con = duckdb.connect(str(tmp))
        configure(con, memory_limit="4GB", threads=2, temp_directory=str(work / "duckdb_tmp"))
        build_warehouse(con, work / "trace", SelectionSettings(trace="synthetic", feature_mode="reference"))
        con.close()
        tmp.rename(db)
    return db


def run(db: Path, work: Path, settings, params: dict) -> dict:
    import duckdb
    from stragglers.prediction.evaluation.run import evaluate
    from stragglers.prediction.methods import nurd
    from stragglers.settings import EngineSettings
    copy = work / "candidate.duckdb"
    shutil.copyfile(db, copy)
    saved, saved_fit = dict(nurd.XGBOOST_DEFAULTS), nurd.NurdFamily.fit
    params = dict(params)
    if "warm_rounds" in params:
        nurd.NurdFamily.fit = warm_fit(params.pop("warm_rounds"))
    nurd.XGBOOST_DEFAULTS.update(params)
    try:
        con = duckdb.connect(str(copy))
        t = time.process_time()
        evaluate(con, "synthetic", ["nurd"], settings, engine=EngineSettings(batch_jobs=200))
        cpu = time.process_time() - t
        jm = con.execute("SELECT method, job_id, f1 FROM job_metrics WHERE trace = 'synthetic'").df()
        pr = con.execute("SELECT method, job_id, task_id, flagged_at_s FROM predictions "
                         "WHERE trace = 'synthetic'").df()
        con.close()
    finally:
        nurd.XGBOOST_DEFAULTS.clear()
        nurd.XGBOOST_DEFAULTS.update(saved)
        nurd.NurdFamily.fit = saved_fit
        copy.unlink()
    flags = {(int(r.job_id), int(r.task_id)): r.flagged_at_s for r in pr[pr.method == "nurd"].itertuples()}
    return {"cpu_s": cpu, "f1": {m: float(g.f1.mean()) for m, g in jm.groupby("method")}, "flags": flags}


def same(a: dict, b: dict) -> float:
    import math
    n = sum(1 for k, fa in a.items() if (math.isnan(fa) and math.isnan(b[k])) or abs(fa - b[k]) <= 1e-6)
    return n / len(a)


def profile(db: Path) -> None:
    """CPU time of NURD's replay of every job in this process (one BLAS thread), then cProfile of it."""
    import cProfile
    import pstats
    import duckdb
    from stragglers.prediction.evaluation.run import load_jobs
    from stragglers.prediction.methods.nurd import NurdFamily
    from stragglers.prediction.replay.workers import replay_jobs
    from stragglers.settings import EvaluationSettings
    with duckdb.connect(str(db), read_only=True) as con:
        jobs = load_jobs(con, "synthetic", EvaluationSettings(workers=1))[0]
    replay_jobs(jobs[:2], [NurdFamily], workers=1)                      # warm-up
    t = time.process_time()
    replay_jobs(jobs, [NurdFamily], workers=1)
    print(f"{len(jobs)} jobs, replay CPU {time.process_time() - t:.2f} s (no profiler)")
    prof = cProfile.Profile(time.process_time)
    prof.runcall(replay_jobs, jobs, [NurdFamily], workers=1)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.nurd_candidates",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/nurd-bench-eval"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", nargs="*", help="candidate names (default: all)")
    ap.add_argument("--profile", action="store_true", help="profile the current model instead")
    a = ap.parse_args(argv)
    from benchmarks.evaluate import embedded_warehouse
    from stragglers.settings.protocols import AUTHORS, with_settings
    from stragglers.settings import EvaluationSettings, SelectionSettings
    work = a.work_dir.resolve()
    ours_db = Path(embedded_warehouse(work)[0])
    if a.profile:
        profile(ours_db)
        return 0
    ref_db = reference_warehouse(work)
    ours = EvaluationSettings(workers=1)
    authors, _ = with_settings(ours, SelectionSettings(), AUTHORS)
    protocols = {"ours": (ours_db, ours), "authors+xgb": (ref_db, authors.replace(regressor="xgboost"))}
    res: dict = {}
    base: dict = {}
    for name, params in CANDIDATES.items():
        if a.only and name not in a.only and base:
            continue
        for proto, (db, settings) in protocols.items():
            r = run(db, work, settings, params)
            base.setdefault(proto, r["flags"])
            r["agreement"] = same(base[proto], r["flags"])
            r["n_tasks"] = len(r.pop("flags"))
            res.setdefault(name, {})[proto] = r
            print(f"{name:40s} {proto:12s} cpu {r['cpu_s']:6.2f} s  F1 " +
                  " ".join(f"{m} {v:.4f}" for m, v in sorted(r["f1"].items())) +
                  f"  same flags {r['agreement']:.4f} of {r['n_tasks']}", flush=True)
    if a.out:
        a.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
