"""Evaluation benchmark: this engine vs a direct re-implementation of the authors' loop.

    python -m benchmarks.evaluate [--max-jobs N] [--out section.md]

On the same jobs (the embedded synthetic trace: generate_google seed 2011, 48
jobs, 8 parts; warehouse built with the default settings):

(i)  this engine: load_jobs + replay_jobs(jobs, [NurdFamily], workers=2):
     XGBoost hist, one fit per checkpoint shared by NURD / NURD-NC / GBTR.
(ii) the authors' per-job loop (code/run_ts.py style): one process; per job
     the checkpoint_features rows are split into one pandas DataFrame per task;
     at every checkpoint X / y are assembled task by task (``task.iloc[k]``)
     into Python lists; scikit-learn ``GradientBoostingRegressor()`` (defaults)
     and ``LogisticRegression(solver='lbfgs')`` are refitted from scratch; the
     NURD flag rule (y_hat / w >= tau, w = max(eps, min(z + delta, 1)), delta
     from the t0 centroids) and the same F / R / candidate sets as the engine.
     F1 with the same definition (stragglers.prediction.replay.metrics.job_scores). BLAS threads are
     limited to 1 (single process; multi-threaded BLAS on 15-column matrices
     only adds overhead on a loaded 2-core machine).

Reports per-job time ratio (ii)/(i), mean F1 of both and |difference|, a
fit-time model (seconds per job = a * K + b * n * K, K checkpoints, n tasks,
non-negative least squares over the measured jobs) and the projected time for
8425 jobs of the real selection's size (1.1M tasks: n = Pareto(x_m = 100,
alpha = 4.27), mean 130.6; K drawn from the measured jobs' K), on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.authors_loop import authors_job
from benchmarks.results import publish

REAL_JOBS = 8425
REAL_TASKS = 1_100_000
PARETO_XM = 100.0


def embedded_warehouse(work: Path) -> tuple[str, dict]:
    import duckdb
    from stragglers.settings import SelectionSettings
    from stragglers.traces.synth import GENERATOR_VERSION, generate_google
    from stragglers.warehouse.assemble import build_warehouse
    from stragglers.warehouse.storage import configure
    raw = work / "trace"
    stamp = work / "trace.json"
    want = {"generator_version": GENERATOR_VERSION, "seed": 2011, "n_jobs": 48, "n_parts": 8}
    db = work / "eval.duckdb"
    if not (stamp.exists() and json.loads(stamp.read_text()) == want and db.exists()):
        generate_google(raw, seed=2011, n_jobs=48, n_parts=8)
        if db.exists():
            db.unlink()
        con = duckdb.connect(str(db))
        configure(con, memory_limit="4GB", threads=2, temp_directory=str(work / "duckdb_tmp"))
        build_warehouse(con, raw, SelectionSettings(trace="synthetic"))
        con.close()
        stamp.write_text(json.dumps(want))
    return str(db), want


def cpu_now() -> float:
    """CPU s of this process, its reaped children and the multiprocessing fork server with its reaped
    children (the local pool's workers are forked from it, not from this process)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime + forkserver_cpu()


def forkserver_cpu() -> float:
    from multiprocessing import forkserver
    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime stime cutime cstime (fields 14-17 of proc(5); index 11-14 after the command name)
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- (i)

def run_engine(db: str, job_ids: list[int] | None, workers: int) -> dict:
    import duckdb
    from stragglers.prediction.evaluation.run import load_jobs
    from stragglers.prediction.methods.nurd import NurdFamily
    from stragglers.settings import EvaluationSettings
    from stragglers.prediction.replay.workers import replay_jobs
    from stragglers.prediction.replay.simulate import results_frames
    con = duckdb.connect(db, read_only=True)
    t0, c0 = time.perf_counter(), cpu_now()
    jobs, _ = load_jobs(con, "synthetic", EvaluationSettings(workers=workers))
    if job_ids is not None:
        keep = set(job_ids)
        jobs = [j for j in jobs if j.job_id in keep]
    t_load = time.perf_counter() - t0
    results = replay_jobs(jobs, [NurdFamily], seed=0, workers=workers)
    frames = results_frames(results, "synthetic")
    time.sleep(0.5)                      # let the fork server reap the workers (their CPU time)
    wall, cpu = time.perf_counter() - t0 - 0.5, cpu_now() - c0
    con.close()
    jm = frames["job_metrics"]
    nurd = jm[jm.method == "nurd"].set_index("job_id")
    per_job = {r.job_id: r.seconds for r in results}     # in-worker seconds (all three variants)
    return {"wall_s": wall, "cpu_s": cpu, "load_s": t_load, "n_jobs": len(jobs),
            "replay_cpu_s": sum(r.cpu_seconds for r in results),
            "flagged_at": flag_times(results),
            "f1": {int(j): float(nurd.loc[j, "f1"]) for j in nurd.index},
            "f1_by_variant": jm.groupby("method")["f1"].mean().to_dict(),
            "per_job_s": {int(k): float(v) for k, v in per_job.items()},
            "per_job_cpu_s": {int(r.job_id): float(r.cpu_seconds) for r in results},
            "shape": {int(j.job_id): (len(j.task_ids), len(j.checkpoints)) for j in jobs}}


def flag_times(results) -> dict:
    """job_id -> {task_id: NURD's flag time (None = never)} over the scored tasks."""
    out = {}
    for r in results:
        v = next(v for v in r.variants if v.method == "nurd")
        out[int(r.job_id)] = {int(t): (None if np.isnan(f) else float(f))
                              for t, f, s in zip(r.task_ids, v.flagged_at, v.scored) if s}
    return out


def agreement(a: dict, b: dict) -> tuple[float, int]:
    """Share of scored tasks whose NURD flag time is the same in a and b (both never, or equal)."""
    same = total = 0
    for j in a:
        for t, fa in a[j].items():
            fb = b[j].get(t, "missing")
            total += 1
            same += fa == fb if fa is None or fb is None or fb == "missing" else abs(fa - fb) <= 1e-6
    return same / max(total, 1), total


def solver_check(db: str, job_ids: list[int]) -> dict:
    """The engine's NURD with the authors' lbfgs propensity solver vs the default (Newton-Cholesky),
    same jobs, this process: F1 and flag-time agreement."""
    import duckdb
    from stragglers.prediction.evaluation.run import load_jobs
    from stragglers.prediction.methods import nurd
    from stragglers.prediction.replay.workers import replay_jobs
    from stragglers.prediction.replay.simulate import results_frames
    from stragglers.settings import EvaluationSettings
    con = duckdb.connect(db, read_only=True)
    jobs = [j for j in load_jobs(con, "synthetic", EvaluationSettings(workers=1))[0] if j.job_id in set(job_ids)]
    con.close()
    out, default = {}, nurd.PROPENSITY_SOLVER
    try:
        for solver in (default, "lbfgs"):
            nurd.PROPENSITY_SOLVER = solver
            t = time.process_time()
            res = replay_jobs(jobs, [nurd.NurdFamily], seed=0, workers=1)
            jm = results_frames(res, "synthetic")["job_metrics"]
            out[solver] = {"f1": float(jm[jm.method == "nurd"].f1.mean()), "flagged_at": flag_times(res),
                           "cpu_s": time.process_time() - t}
    finally:
        nurd.PROPENSITY_SOLVER = default
    share, n = agreement(out[default]["flagged_at"], out["lbfgs"]["flagged_at"])
    return {"default": default, "f1_default": out[default]["f1"], "f1_lbfgs": out["lbfgs"]["f1"],
            "cpu_default": out[default]["cpu_s"], "cpu_lbfgs": out["lbfgs"]["cpu_s"],
            "agreement": share, "n_tasks": n}


# --------------------------------------------------------------------------- (ii)

def run_authors(db: str, job_ids: list[int]) -> dict:
    import duckdb
    from threadpoolctl import threadpool_limits
    from stragglers.trace_formats import GOOGLE_FEATURES
    con = duckdb.connect(db, read_only=True)
    out = {}
    t0, c0 = time.perf_counter(), cpu_now()
    with threadpool_limits(1):
        for i, jid in enumerate(job_ids):
            out[jid] = authors_job(con, jid, GOOGLE_FEATURES)
            print(f"    (ii) job {i + 1}/{len(job_ids)}: {out[jid]['seconds']:.1f} s", flush=True)
    con.close()
    return {"wall_s": time.perf_counter() - t0, "cpu_s": cpu_now() - c0,
            "f1": {j: r["f1"] for j, r in out.items()},
            "f1_by_variant": {v: float(np.mean([r["f1_by_variant"][v] for r in out.values()]))
                              for v in ("nurd", "nurd_nc", "gbtr")},
            "per_job_s": {j: r["seconds"] for j, r in out.items()},
            "per_job_cpu_s": {j: r["cpu_seconds"] for j, r in out.items()},
            "flagged_at": {j: r["flagged_at"] for j, r in out.items()}}


# --------------------------------------------------------------------------- fit model

def fit_cost(shape: dict, per_job: dict) -> tuple[float, float]:
    """seconds ~= a * K + b * n * K (non-negative least squares)."""
    from scipy.optimize import nnls
    ids = sorted(per_job)
    A = np.array([[shape[j][1], shape[j][0] * shape[j][1]] for j in ids], float)
    y = np.array([per_job[j] for j in ids], float)
    (a, b), _ = nnls(A, y)
    return float(a), float(b)


def real_sizes(ks: list[int], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mean = REAL_TASKS / REAL_JOBS
    alpha = mean / (mean - PARETO_XM)                       # Pareto mean = alpha x_m / (alpha - 1)
    n = np.floor(PARETO_XM * (1 + rng.pareto(alpha, REAL_JOBS))).astype(int)
    K = rng.choice(np.asarray(ks), REAL_JOBS, replace=True)
    return n, K


def micro(sizes=(100, 300, 1000, 3000)) -> list[dict]:
    """Fit time of one checkpoint's models at n finished tasks (15 features)."""
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits
    from stragglers.prediction.methods.nurd import make_regressor
    rng = np.random.default_rng(0)
    rows = []
    with threadpool_limits(1):
        for n in sizes:
            X, y = rng.random((n, 15)), rng.random(n) * 1000
            s = (rng.random(n) < 0.5).astype(int)
            r = {"n": n}
            for name, f in (("xgboost_hist", lambda: make_regressor("xgboost", 0).fit(X, y)),
                            ("sklearn_gbr", lambda: GradientBoostingRegressor().fit(X, y)),
                            ("logreg", lambda: LogisticRegression(max_iter=1000).fit(X, s))):
                f()
                t = time.perf_counter()
                for _ in range(3):
                    f()
                r[name] = (time.perf_counter() - t) / 3
            rows.append(r)
    return rows


# --------------------------------------------------------------------------- report

def report(res: dict) -> str:
    e, a = res["engine"], res["authors"]
    from stragglers.prediction.methods.nurd import XGBOOST_DEFAULTS as XGB
    ids = res["job_ids"]
    L = ["### Figures (one run)\n",
         f"Run {res['started']} on {res['machine']}; load average before/after: {res['load_before']} / "
         f"{res['load_after']} (shared machine: wall times include contention).\n",
         f"Jobs: {len(ids)} of the embedded trace's {res['n_jobs_all']} evaluable jobs "
         f"({'all' if len(ids) == res['n_jobs_all'] else 'subset: the first by job id'}), "
         f"{sum(e['shape'][j][0] for j in ids):,} tasks, {sum(e['shape'][j][1] for j in ids):,} checkpoints "
         f"(n = {min(e['shape'][j][0] for j in ids)}..{max(e['shape'][j][0] for j in ids)} tasks, "
         f"K = {min(e['shape'][j][1] for j in ids)}..{max(e['shape'][j][1] for j in ids)}).\n",
         "| | (i) engine (XGBoost, workers=2) | (ii) authors' loop (sklearn GBR, 1 process) | (ii)/(i) |",
         "|---|---|---|---|",
         f"| wall time, all jobs (s) | {e['wall_s']:.1f} (load_jobs {e['load_s']:.1f}) | {a['wall_s']:.1f} | "
         f"{a['wall_s'] / e['wall_s']:.1f}x |",
         f"| wall time per job (s) | {e['wall_s'] / len(ids):.2f} | {a['wall_s'] / len(ids):.2f} | "
         f"{a['wall_s'] / e['wall_s']:.1f}x |",
         f"| CPU time, all jobs (s, incl. workers) | {e['cpu_s']:.1f} | {a['cpu_s']:.1f} | "
         f"{a['cpu_s'] / e['cpu_s']:.1f}x |",
         f"| per-job compute on one core, sum (s) | {sum(e['per_job_s'].values()):.1f} | "
         f"{sum(a['per_job_s'].values()):.1f} | "
         f"{sum(a['per_job_s'].values()) / sum(e['per_job_s'].values()):.1f}x |",
         f"| CPU time of the replays alone (s; (i): in the workers, excl. start-up) | {e['replay_cpu_s']:.1f} | "
         f"{a['cpu_s']:.1f} | {a['cpu_s'] / e['replay_cpu_s']:.1f}x |",
         f"| per-job ratio (ii)/(i), median over jobs | | | {res['median_job_ratio']:.1f}x |",
         f"| mean F1 (NURD) | {res['f1_engine']:.4f} | {res['f1_authors']:.4f} | "
         f"abs diff {res['f1_diff']:.4f} |",
         f"| NURD flag time identical (share of {res['agreement_n']:,} scored tasks) | | | "
         f"{res['agreement']:.3f} |",
         ""]
    sc = res["solver_check"]
    L += [f"Propensity solver, the engine's NURD in one process on the same jobs: {sc['default']} (default) vs "
          f"lbfgs (the authors'): mean F1 {sc['f1_default']:.4f} vs {sc['f1_lbfgs']:.4f}, NURD flag time "
          f"identical for {sc['agreement']:.4f} of {sc['n_tasks']:,} scored tasks; replay CPU "
          f"{sc['cpu_default']:.1f} s vs {sc['cpu_lbfgs']:.1f} s.\n"]
    fe, fa = res["fit"]["engine"], res["fit"]["authors"]
    p = res["projection"]
    L += [f"Mean F1 by variant on these jobs, (i) / (ii): "
          + ", ".join(f"{k} {v:.4f} / {a['f1_by_variant'][k]:.4f}" for k, v in sorted(e["f1_by_variant"].items()))
          + ".\n",
          "Cost model, seconds per job = a * K + b * n * K: "
          f"(i) a = {fe[0] * 1e3:.1f} ms, b = {fe[1] * 1e6:.2f} us; "
          f"(ii) a = {fa[0] * 1e3:.1f} ms, b = {fa[1] * 1e6:.2f} us.\n",
          f"Projection to the real selection ({REAL_JOBS} jobs, {p['tasks']:,} tasks drawn as "
          f"Pareto(x_m=100, alpha={p['alpha']:.2f}), max {p['max_n']:,}; K drawn from the measured jobs, "
          f"mean {p['mean_k']:.1f}): (i) {p['engine_core_s'] / 3600:.1f} core-hours -> "
          f"{p['engine_2cores_s'] / 3600:.1f} h on 2 cores; (ii) {p['authors_core_s'] / 3600:.1f} core-hours -> "
          f"{p['authors_core_s'] / 3600:.1f} h in one process ({p['authors_core_s'] / 7200:.1f} h if two "
          f"copies ran on the 2 cores); ratio {p['authors_core_s'] / p['engine_2cores_s']:.1f}x "
          f"(one process vs workers=2), {p['authors_core_s'] / p['engine_core_s']:.1f}x per core.\n",
          "The same model on CPU seconds per job (process time, independent of the machine's load): "
          f"(i) a = {res['fit_cpu']['engine'][0] * 1e3:.1f} ms, b = {res['fit_cpu']['engine'][1] * 1e6:.2f} us; "
          f"(ii) a = {res['fit_cpu']['authors'][0] * 1e3:.1f} ms, b = {res['fit_cpu']['authors'][1] * 1e6:.2f} us; "
          f"per-job CPU ratio (ii)/(i), median over jobs {res['median_job_cpu_ratio']:.1f}x. Projected to the "
          f"real selection: (i) {p['engine_cpu_s'] / 3600:.2f} CPU-hours, (ii) {p['authors_cpu_s'] / 3600:.2f} "
          f"CPU-hours, ratio {p['authors_cpu_s'] / p['engine_cpu_s']:.1f}x.\n",
          "Fit time of one checkpoint's model on n rows x 15 features (one thread):\n",
          f"| n | XGBoost hist (engine: {XGB['n_estimators']} rounds, depth {XGB['max_depth']}, "
          f"lr {XGB['learning_rate']}, {XGB['max_bin']} bins) | sklearn GBR (defaults, depth 3) | LogisticRegression |",
          "|---|---|---|---|"]
    for r in res["micro"]:
        L.append(f"| {r['n']} | {r['xgboost_hist'] * 1e3:.0f} ms | {r['sklearn_gbr'] * 1e3:.0f} ms | "
                 f"{r['logreg'] * 1e3:.1f} ms |")
    t = res["targets"]
    L += ["", f"Target: at least 10x faster at |mean F1 difference| <= 0.02: speed {t['speed']:.1f}x "
          f"({'met' if t['speed'] >= 10 else 'NOT met'}; CPU {t['cpu_speed']:.1f}x), |F1 diff| {res['f1_diff']:.4f} "
          f"({'met' if res['f1_diff'] <= 0.02 else 'NOT met'}).\n"]
    return "\n".join(L)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.evaluate",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/nurd-bench-eval"))
    ap.add_argument("--max-jobs", type=int, default=None, help="run both on the first N jobs only")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    work = a.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    res = {"started": time.strftime("%Y-%m-%d %H:%M:%S"),
           "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
           "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    print("building the warehouse of the embedded trace ...", flush=True)
    db, res["trace"] = embedded_warehouse(work)

    import duckdb
    from stragglers.prediction.evaluation.run import load_jobs
    from stragglers.settings import EvaluationSettings
    con = duckdb.connect(db, read_only=True)
    all_ids = [int(j.job_id) for j in load_jobs(con, "synthetic", EvaluationSettings(workers=1))[0]]
    con.close()
    res["n_jobs_all"] = len(all_ids)
    ids = sorted(all_ids)[: a.max_jobs] if a.max_jobs else sorted(all_ids)
    res["job_ids"] = ids

    print(f"(i) engine on {len(ids)} jobs ...", flush=True)
    e = run_engine(db, ids, a.workers)
    print(f"    {e['wall_s']:.1f} s", flush=True)
    print(f"(ii) authors' loop on {len(ids)} jobs ...", flush=True)
    au = run_authors(db, ids)
    print(f"    {au['wall_s']:.1f} s", flush=True)
    print("micro-benchmark of single fits ...", flush=True)
    res["micro"] = micro()
    print("propensity solver check (one process) ...", flush=True)
    res["solver_check"] = solver_check(db, ids)
    res["agreement"], res["agreement_n"] = agreement(e["flagged_at"], au["flagged_at"])
    res["engine"], res["authors"] = e, au
    res["f1_engine"] = float(np.mean([e["f1"][j] for j in ids]))
    res["f1_authors"] = float(np.mean([au["f1"][j] for j in ids]))
    res["f1_diff"] = abs(res["f1_engine"] - res["f1_authors"])
    res["median_job_ratio"] = float(np.median([au["per_job_s"][j] / e["per_job_s"][j] for j in ids]))
    fe, fa = fit_cost(e["shape"], e["per_job_s"]), fit_cost(e["shape"], au["per_job_s"])
    res["fit"] = {"engine": fe, "authors": fa}
    # the same model on CPU seconds (process time: what a job costs whatever the machine's load)
    fe_cpu, fa_cpu = fit_cost(e["shape"], e["per_job_cpu_s"]), fit_cost(e["shape"], au["per_job_cpu_s"])
    res["fit_cpu"] = {"engine": fe_cpu, "authors": fa_cpu}
    res["median_job_cpu_ratio"] = float(np.median([au["per_job_cpu_s"][j] / e["per_job_cpu_s"][j] for j in ids]))
    n, K = real_sizes([e["shape"][j][1] for j in ids])
    cost_e = fe[0] * K + fe[1] * n * K
    cost_a = fa[0] * K + fa[1] * n * K
    # engine: per-job in-worker time x jobs, spread over `workers` processes, plus the
    # measured run overhead (load_jobs, spawning) scaled by jobs
    overhead = max(0.0, e["wall_s"] - sum(e["per_job_s"].values()) / a.workers) / len(ids)
    mean = REAL_TASKS / REAL_JOBS
    res["projection"] = {"tasks": int(n.sum()), "alpha": mean / (mean - PARETO_XM), "max_n": int(n.max()),
                         "mean_k": float(K.mean()), "engine_core_s": float(cost_e.sum()),
                         "engine_2cores_s": float(cost_e.sum() / a.workers + overhead * REAL_JOBS),
                         "authors_core_s": float(cost_a.sum()),
                         "engine_cpu_s": float((fe_cpu[0] * K + fe_cpu[1] * n * K).sum()),
                         "authors_cpu_s": float((fa_cpu[0] * K + fa_cpu[1] * n * K).sum())}
    res["targets"] = {"speed": au["wall_s"] / e["wall_s"], "cpu_speed": au["cpu_s"] / e["cpu_s"]}
    res["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    publish(res, report(res), raw=work / "evaluate_results.json", out=a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
