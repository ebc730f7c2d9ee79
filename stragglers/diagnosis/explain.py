"""Flag + explain: each task a method flagged, with its job's Hound mixture and the metrics in which it
deviates from the tasks finished by its flag (``straggler_explanations``), and how often that
explanation names a cause that hit the task, against the truths of ``stragglers.diagnosis.truth``
(``explanation_accuracy``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stragglers.diagnosis.truth import BASELINE_CAUSE, PRIMARY_TRUTH, straggler_causes, task_causes
from stragglers.diagnosis.vocabulary import WORD_CAUSE

# checkpoint_features column -> Hound metric (scpu, the sampled CPU, repeats MEAN_CPU and is left out)
FEATURE_METRICS = {"mcu": "MEAN_CPU", "maxcpu": "PEAK_CPU", "cmu": "MEAN_MEM", "amu": "MEM_ASSIGN",
                   "maxmu": "PEAK_MEM", "upc": "PAGE_CACHE_UM", "tpc": "PAGE_CACHE", "mio": "MEAN_IO",
                   "maxio": "PEAK_IO", "mdk": "DISK_SPACE", "cpi": "CPI", "mai": "CACHE_MISS", "ev": "EVICT",
                   "fl": "FAIL", "sched_delay": "SCHED_DELAY"}
TOP_SIGNALS = 3


def signal_z(tasks: np.ndarray, finished: np.ndarray) -> np.ndarray:
    """Deviation of each flagged task from the tasks finished by the checkpoint, per metric:
    z = (x - median) / sd over the finished tasks. Where the finished tasks do not vary (sd = 0),
    a task that differs from their common value deviates without bound (z = +-inf: e.g. the only
    evicted task among finished tasks never evicted, the usual case, since evicted tasks finish
    late) and one that equals it not at all (NaN, no signal)."""
    if not len(finished):
        return np.full(tasks.shape, np.nan)
    med = np.median(finished, axis=0)
    ok = np.ptp(finished, axis=0) > 0
    sd = np.where(ok, finished.std(axis=0), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        flat = np.where(tasks == med, np.nan, np.sign(tasks - med) * np.inf)
        return np.where(ok, (tasks - med) / sd, flat)


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
                if np.isnan(z[i, j]):
                    continue
                word = words_p[j] if z[i, j] > 0 else words_m[j]
                sig.append((word, float(z[i, j]), WORD_CAUSE.get(word)))
            rows.append({"task_id": int(task_id), "flagged_at_s": float(cp), "job_causes": job_causes_label,
                         "task_signals": "; ".join(f"{w} z={v:.1f}" + (f" -> {c}" if c else "") for w, v, c in sig),
                         "top_signal_cause": sig[0][2] if sig else None,
                         "signal_causes": ",".join(c for _, _, c in sig if c)})
    return pd.DataFrame(rows, columns=["task_id", "flagged_at_s", "job_causes", "task_signals", "top_signal_cause",
                                       "signal_causes"])


EXPLANATION_COLUMNS = ["method", "job_id", "task_id", "flagged_at_s", "job_causes", "task_signals",
                       "top_signal_cause", "signal_causes"]


def explain_flagged(flagged: pd.DataFrame, causes: pd.DataFrame, features: pd.DataFrame,
                    method: str) -> pd.DataFrame:
    """The rows of ``straggler_explanations``: every task of ``flagged`` (job_id, task_id, flagged_at_s)
    with its job's Hound mixture (``causes``: job_id, cause, weight) and its own signals
    (``explain_job`` on ``features``, the flagged jobs' checkpoint_features rows plus sched_delay)."""
    labels = (causes.sort_values(["job_id", "weight"], ascending=[True, False])
              .assign(l=lambda d: d.cause + ":" + d.weight.round(2).astype(str))
              .groupby("job_id").l.agg(";".join))
    parts = []
    feats = dict(tuple(features.groupby("job_id")))
    for job_id, fl in flagged.groupby("job_id"):
        df = explain_job(fl, feats[job_id], labels.get(job_id, ""))
        parts.append(df.assign(job_id=job_id))
    cols = EXPLANATION_COLUMNS
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols[1:])).assign(
        method=method)[cols].astype({"top_signal_cause": "string", "signal_causes": "string"})


def explanation_accuracy(expl: pd.DataFrame, truth_tasks: pd.DataFrame, job_causes: pd.DataFrame,
                         added: pd.DataFrame | None = None) -> pd.DataFrame:
    """Does the flagged task's top signal name a cause that hit that task? Beside: any of its top 3,
    the job's dominant Hound cause as the answer, and always data skew. Against each truth: the
    cause planted on the task (over flagged tasks that carry one), the effective causes (planted
    or a background eviction or wait, ``task_causes``; over flagged tasks with at least one) and,
    given ``added`` (``cause_added_s``), the causes that explain the task as a straggler (over flagged
    tasks that finished as stragglers explained by at least one cause, ``straggler_causes``)."""
    tt = truth_tasks.rename(columns={"task_index": "task_id"})
    tt = tt.assign(planted=[{c} if c != "none" else set() for c in tt.cause], effective=task_causes(tt))
    m = expl.merge(tt[["job_id", "task_id", "planted", "effective"]], on=["job_id", "task_id"], how="left")
    truths = ["planted", "effective"]
    if added is not None:
        sc = straggler_causes(added).rename(columns={"causes": PRIMARY_TRUTH})
        m = m.merge(sc, on=["job_id", "task_id"], how="left")
        truths.append(PRIMARY_TRUTH)
    dom = (job_causes.sort_values("weight", ascending=False).drop_duplicates("job_id")
           .set_index("job_id")["cause"])
    m["job_dominant"] = m.job_id.map(dom)
    rows = []
    for truth in truths:
        sets = [s if isinstance(s, set) else set() for s in m[truth]]
        keep = [bool(s) for s in sets]
        caused, sets = m[keep], [s for s in sets if s]
        n = len(caused)

        def rate(hits) -> float:
            return float(np.mean(list(hits))) if n else np.nan

        answers = {
            "task's top signal": rate(a in s for a, s in zip(caused.top_signal_cause, sets)),
            "any of the task's top 3 signals": rate(bool(set(str(a).split(",")) & s)
                                                    for a, s in zip(caused.signal_causes, sets)),
            "job's dominant Hound cause": rate(a in s for a, s in zip(caused.job_dominant, sets)),
            f"always {BASELINE_CAUSE}": rate(BASELINE_CAUSE in s for s in sets),
        }
        rows += [{"truth": truth, "answer": a, "flagged_tasks": len(m), "with_cause": n, "accuracy": v}
                 for a, v in answers.items()]
    return pd.DataFrame(rows)
