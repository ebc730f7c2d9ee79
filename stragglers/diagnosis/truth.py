"""Hound against the embedded trace's planted causes, and the flag + explain table.

The generator (stragglers/traces/synth) plants per job a mixture of Hound's
nine causes (drawn from Hound Tables 6-7) and per task the cause that hit it
(or 'none'); ``fetch_trace`` writes them to ``<data_dir>/truth/synthetic/``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.diagnosis.vocabulary import WORD_CAUSE
from stragglers.traces.synth.model import CAUSES, HOUND_COVERAGE, HOUND_DOMINANT_COVERAGE, HOUND_N_CAUSES_P

BASELINE_CAUSE = "data_skew"   # the most common planted cause (Hound Table 7: dominant in 55% of jobs)


def parse_causes(label: str) -> dict[str, float]:
    """'data_skew:0.62;cache_misses:0.38' -> {'data_skew': 0.62, 'cache_misses': 0.38}."""
    out = {}
    for part in str(label or "").split(";"):
        if part:
            name, _, w = part.partition(":")
            if name not in CAUSES:
                raise ValueError(f"truth_jobs.causes: unknown cause {name!r} in {label!r}")
            out[name] = float(w)
    return out


def load_truth(truth_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    truth_dir = Path(truth_dir)
    paths = [truth_dir / "truth_jobs.parquet", truth_dir / "truth_tasks.parquet"]
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"ground truth {p} is missing: re-materialize raw_trace for the embedded trace")
    return pd.read_parquet(paths[0]), pd.read_parquet(paths[1])


def diagnosed_mixtures(job_causes: pd.DataFrame, jobs: list) -> dict:
    """job -> {named cause: weight} (unnamed topics kept under their keyword label)."""
    out = {j: {} for j in jobs}
    for r in job_causes.itertuples(index=False):
        if r.job_id in out:
            out[r.job_id][r.cause] = out[r.job_id].get(r.cause, 0.0) + float(r.weight)
    return out


def _scores(answers: dict, truth: dict) -> dict:
    """Dominant-cause accuracy; micro precision/recall of the cause sets; macro (mean over jobs)."""
    hit = n_ans = n_true = inter = 0
    precs, recs = [], []
    for job, t in truth.items():
        a = answers.get(job, {})
        dom_t = max(t, key=t.get)
        dom_a = max(a, key=a.get) if a else None
        hit += dom_a == dom_t
        sa, st = {c for c in a if c in CAUSES}, set(t)
        i = len(sa & st)
        inter, n_ans, n_true = inter + i, n_ans + len(sa), n_true + len(st)
        precs.append(i / len(sa) if sa else 0.0)
        recs.append(i / len(st))
    n = len(truth)
    return {"jobs": n, "dominant_accuracy": hit / n if n else np.nan,
            "precision": inter / n_ans if n_ans else 0.0, "recall": inter / n_true if n_true else np.nan,
            "precision_macro": float(np.mean(precs)) if n else np.nan,
            "recall_macro": float(np.mean(recs)) if n else np.nan}


def validate(job_causes: pd.DataFrame, truth_jobs: pd.DataFrame, jobs: list) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``hound_validation``: per diagnosed job the planted and diagnosed mixtures, and the summary of
    Hound vs the baseline that always answers data skew. Jobs Hound left without any cause count as
    wrong (dominant) and add nothing to precision."""
    tj = truth_jobs.set_index("job_id")
    missing = [j for j in jobs if j not in tj.index]
    if missing:
        raise LookupError(f"{len(missing)} jobs have no ground truth (e.g. job {missing[0]}): the truth files "
                          f"do not belong to this trace")
    truth = {j: parse_causes(tj.at[j, "causes"]) for j in jobs}
    hound = diagnosed_mixtures(job_causes, jobs)
    baseline = {j: {BASELINE_CAUSE: 1.0} for j in jobs}
    rows = []
    for j in jobs:
        t, a = truth[j], hound[j]
        rows.append({"job_id": j, "planted": ";".join(f"{c}:{w:.2f}" for c, w in sorted(t.items(), key=lambda kv: -kv[1])),
                     "diagnosed": ";".join(f"{c}:{w:.2f}" for c, w in sorted(a.items(), key=lambda kv: -kv[1])),
                     "planted_dominant": max(t, key=t.get), "diagnosed_dominant": max(a, key=a.get) if a else None})
    per_job = pd.DataFrame(rows)
    per_job["dominant_match"] = per_job.planted_dominant == per_job.diagnosed_dominant
    summary = pd.DataFrame([{"method": "hound", **_scores(hound, truth)},
                            {"method": f"always_{BASELINE_CAUSE}", **_scores(baseline, truth)}])
    return per_job, summary


def n_causes_table(job_causes: pd.DataFrame, truth_jobs: pd.DataFrame, jobs: list) -> pd.DataFrame:
    """Table 6: share of jobs with 1..5 causes: Hound's paper, the planted truth, our diagnosis."""
    named = job_causes[job_causes.named & job_causes.job_id.isin(jobs)]
    ours = named.groupby("job_id").size().reindex(jobs, fill_value=0)
    truth = pd.Series({j: len(parse_causes(c)) for j, c in truth_jobs.set_index("job_id").causes.items()
                       if j in set(jobs)})
    rows = []
    for k in range(0, 6):
        rows.append({"n_causes": k, "hound_paper": HOUND_N_CAUSES_P[k - 1] if k else 0.0,
                     "planted": float((truth == k).mean()) if len(truth) else np.nan,
                     "diagnosed": float((ours == k).mean()) if len(ours) else np.nan})
    more = {"n_causes": ">5", "hound_paper": 0.0, "planted": float((truth > 5).mean()) if len(truth) else np.nan,
            "diagnosed": float((ours > 5).mean()) if len(ours) else np.nan}
    return pd.DataFrame(rows + [more])


def coverage_table(job_causes: pd.DataFrame, truth_jobs: pd.DataFrame | None, jobs: list) -> pd.DataFrame:
    """Table 7: coverage (share of jobs where the cause explains some stragglers) and dominant coverage
    (share where it explains the majority, weight > 1/2), Hound's paper beside ours and the truth."""
    mix = diagnosed_mixtures(job_causes, jobs)
    truth = ({j: parse_causes(c) for j, c in truth_jobs.set_index("job_id").causes.items() if j in set(jobs)}
             if truth_jobs is not None else {})
    n = max(len(jobs), 1)
    rows = []
    for c in CAUSES:
        row = {"cause": c, "coverage_paper": HOUND_COVERAGE[c], "dominant_paper": HOUND_DOMINANT_COVERAGE[c],
               "coverage": sum(c in m for m in mix.values()) / n,
               "dominant": sum(m.get(c, 0) > 0.5 for m in mix.values()) / n}
        if truth:
            row["coverage_planted"] = sum(c in m for m in truth.values()) / len(truth)
            row["dominant_planted"] = sum(m.get(c, 0) > 0.5 for m in truth.values()) / len(truth)
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- flag + explain
# checkpoint_features column -> Hound metric (scpu, the sampled CPU, repeats MEAN_CPU and is left out)
FEATURE_METRICS = {"mcu": "MEAN_CPU", "maxcpu": "PEAK_CPU", "cmu": "MEAN_MEM", "amu": "MEM_ASSIGN",
                   "maxmu": "PEAK_MEM", "upc": "PAGE_CACHE_UM", "tpc": "PAGE_CACHE", "mio": "MEAN_IO",
                   "maxio": "PEAK_IO", "mdk": "DISK_SPACE", "cpi": "CPI", "mai": "CACHE_MISS", "ev": "EVICT",
                   "fl": "FAIL", "sched_delay": "SCHED_DELAY"}
TOP_SIGNALS = 3


def signal_z(tasks: np.ndarray, finished: np.ndarray) -> np.ndarray:
    """Deviation of each flagged task from the tasks finished by the checkpoint, per metric:
    z = (x - median) / sd over the finished tasks; NaN where the finished tasks do not vary."""
    med = np.median(finished, axis=0)
    ok = np.ptp(finished, axis=0) > 0 if len(finished) else np.zeros(finished.shape[1], bool)
    sd = np.where(ok, finished.std(axis=0) if len(finished) else 1.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, (tasks - med) / sd, np.nan)


def explain_job(flagged: pd.DataFrame, features: pd.DataFrame, job_causes_label: str,
                top: int = TOP_SIGNALS) -> pd.DataFrame:
    """The plain per-job function of ``straggler_explanations``. ``flagged``: the job's flagged tasks
    (task_id, flagged_at_s); ``features``: the job's checkpoint_features rows plus sched_delay (known
    from the task's first SCHEDULE on, so no look-ahead). At the checkpoint where a task was flagged,
    its metrics are compared with the tasks finished by then (all visible tasks when fewer than 3
    finished); the ``top`` largest |z| become Hound words, each with the cause it names (Table 4)."""
    cols = [c for c in FEATURE_METRICS if c in features.columns]
    words_p = np.array([f"{FEATURE_METRICS[c]}(+)" for c in cols])
    words_m = np.array([f"{FEATURE_METRICS[c]}(-)" for c in cols])
    rows = []
    by_cp = {cp: g for cp, g in features.groupby("checkpoint_s")}
    for cp, fl in flagged.groupby("flagged_at_s"):
        at = by_cp.get(cp)
        if at is None:
            raise LookupError(f"job {features.job_id.iloc[0]}: no checkpoint_features rows at flagged_at_s={cp}")
        finished = at[at.is_finished.astype(bool)]
        if len(finished) < 3:
            finished = at
        idx = at.set_index("task_id").reindex(fl.task_id)
        z = signal_z(idx[cols].to_numpy(float), finished[cols].to_numpy(float))
        order = np.argsort(-np.nan_to_num(np.abs(z), nan=-1.0), axis=1)[:, :top]
        for i, task_id in enumerate(fl.task_id):
            sig = []
            for j in order[i]:
                if not np.isfinite(z[i, j]):
                    continue
                word = words_p[j] if z[i, j] > 0 else words_m[j]
                sig.append((word, float(z[i, j]), WORD_CAUSE.get(word)))
            rows.append({"task_id": int(task_id), "flagged_at_s": float(cp), "job_causes": job_causes_label,
                         "task_signals": "; ".join(f"{w} z={v:.1f}" + (f" -> {c}" if c else "") for w, v, c in sig),
                         "top_signal_cause": sig[0][2] if sig else None,
                         "signal_causes": ",".join(c for _, _, c in sig if c)})
    return pd.DataFrame(rows, columns=["task_id", "flagged_at_s", "job_causes", "task_signals", "top_signal_cause",
                                       "signal_causes"])


def explanation_accuracy(expl: pd.DataFrame, truth_tasks: pd.DataFrame, job_causes: pd.DataFrame) -> pd.DataFrame:
    """Does the flagged task's top signal name the cause planted on that task? Beside: any of its top 3,
    the job's dominant Hound cause as the answer, and always data skew. Over flagged tasks that carry
    a planted cause; the share of flagged tasks without one is reported."""
    tt = truth_tasks.rename(columns={"task_index": "task_id"})[["job_id", "task_id", "cause"]]
    m = expl.merge(tt, on=["job_id", "task_id"], how="left")
    dom = (job_causes.sort_values("weight", ascending=False).drop_duplicates("job_id")
           .set_index("job_id")["cause"])
    m["job_dominant"] = m.job_id.map(dom)
    caused = m[m.cause.notna() & (m.cause != "none")]
    n = len(caused)

    def rate(hits) -> float:
        return float(np.mean(hits)) if n else np.nan

    return pd.DataFrame([
        {"answer": "task's top signal", "flagged_tasks": len(m), "with_planted_cause": n,
         "accuracy": rate(caused.top_signal_cause == caused.cause)},
        {"answer": "any of the task's top 3 signals", "flagged_tasks": len(m), "with_planted_cause": n,
         "accuracy": rate([c in str(s).split(",") for c, s in zip(caused.cause, caused.signal_causes)])},
        {"answer": "job's dominant Hound cause", "flagged_tasks": len(m), "with_planted_cause": n,
         "accuracy": rate(caused.job_dominant == caused.cause)},
        {"answer": f"always {BASELINE_CAUSE}", "flagged_tasks": len(m), "with_planted_cause": n,
         "accuracy": rate(caused.cause == BASELINE_CAUSE)},
    ])
