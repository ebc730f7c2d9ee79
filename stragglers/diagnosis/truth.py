"""Hound against the embedded trace's planted causes (the check: ``hound_validation``, Tables 6 and 7).

The generator (stragglers/traces/synth) plants per job a mixture of Hound's
nine causes (drawn from Hound Tables 6-7) and per task the cause that hit it
(or 'none'); ``fetch_trace`` writes them to ``<data_dir>/truth/synthetic/``.

Two truths per job: ``causes`` is the planted mixture (the draw from Tables 6-7); ``causes_effective``
adds the background evictions the generator draws outside the planted causes (at the real
excerpt's rate), which lengthen a task's run as the eviction cause does
(``stragglers.traces.synth.model.effective_causes``). The check scores Hound against both; the
effective one is what the trace's latencies carry. The flag + explain table and its accuracy against
the same truths are ``stragglers.diagnosis.explain``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.traces.synth import model as M
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


TRUTHS = {"effective": "causes_effective", "planted": "causes"}   # truth name -> truth_jobs column
PRIMARY_TRUTH = "stragglers"   # the check: what Hound's weights estimate (``straggler_mixtures``)
BEST_CONSTANT = "best_constant_in_hindsight"
# columns an older generator did not write (truth versions 2 and 4)
_NEWEST_COLUMNS = {"truth_jobs.parquet": ("causes_effective", "median_wait_s"),
                   "truth_tasks.parquet": ("background", "final_schedule_us", "evict_lost_s", "slow_start_s")}


def load_truth(truth_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    truth_dir = Path(truth_dir)
    paths = [truth_dir / "truth_jobs.parquet", truth_dir / "truth_tasks.parquet"]
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"ground truth {p} is missing: re-materialize raw_trace for the embedded trace")
    tj, tt = pd.read_parquet(paths[0]), pd.read_parquet(paths[1])
    for p, df in zip(paths, (tj, tt)):
        for col in _NEWEST_COLUMNS[p.name]:
            if col not in df.columns:
                raise LookupError(f"ground truth {p} has no column {col!r} (written by an older generator): "
                                  f"re-materialize raw_trace for the embedded trace")
    return tj, tt


def task_causes(truth_tasks: pd.DataFrame) -> pd.Series:
    """Per task the set of Hound causes that lengthened its run: its planted cause, a background
    eviction and a background queueing delay (the effective truth, as ``effective_causes`` counts it)."""
    return pd.Series([M.touched_causes(c, b) for c, b in zip(truth_tasks.cause, truth_tasks.background)],
                     index=truth_tasks.index)


STRAGGLER_QUANTILE = 0.9   # a straggler: latency above its job's 90th percentile (NURD's definition)
# the planted causes that lengthen the work of the last attempt by the factor (1 + severity)
# (stragglers.traces.synth.model.cause_effect); limited processor also runs on a slow machine
_WORK_CAUSES = (M.DATA_SKEW, M.COMPUTATION_SKEW, M.IO_SKEW, M.LIMITED_MEMORY, M.LIMITED_IO, M.CACHE_MISSES)


def cause_added_s(truth_tasks: pd.DataFrame, truth_jobs: pd.DataFrame, inputs: pd.DataFrame) -> pd.DataFrame:
    """Per finished task Hound sees (``inputs``: job_id, task_id, latency_s, sched_delay), the seconds
    each of Hound's causes added to its end-to-end latency beyond what it would have taken had the
    cause taken its typical time (Ousterhout et al.'s counterfactual, quoted by Hound Section 6: a
    cause explains a straggler when the task would not straggle without it). From the generator's
    truth, with w = the last attempt's work (final FINISH - final SCHEDULE - the queueing cause's
    slow start), s = the planted severity and r = max(machine slowdown / median machine slowdown, 1):

    - data skew, computation skew, I/O skew, limited memory, limited I/O, cache misses (planted):
      w * s / (1 + s), the cause's share of the work;
    - limited processor: w * (1 - 1 / ((1 + s) r)) when planted (a contended, slow machine), and
      w * (1 - 1 / r) from the machine alone otherwise: a slow machine gives less CPU and a longer
      run, the signature of Hound's limited processor (Table 4, E5: "limited processor or
      contention"; Ouyang et al.'s node-level stragglers);
    - queueing delay: the wait beyond the job's median (SCHEDULE - SUBMIT, when the SUBMIT is in
      the trace) plus the queueing cause's slow start;
    - eviction: the time evicted attempts lost, each up to the next SCHEDULE.

    Failures are not among Hound's causes and random variation (the generator's noise) is no
    cause: a straggler they alone explain is explained by none. Zero where a cause added nothing."""
    tt = truth_tasks.rename(columns={"task_index": "task_id"})
    m = inputs[["job_id", "task_id", "latency_s", "sched_delay"]].merge(
        tt[["job_id", "task_id", "cause", "severity", "machine_slowdown", "final_schedule_us",
            "final_finish_us", "evict_lost_s", "slow_start_s"]], on=["job_id", "task_id"], how="left")
    if m.cause.isna().any():
        raise LookupError(f"{int(m.cause.isna().sum())} hound_inputs tasks have no ground truth")
    wait_med = m.job_id.map(truth_jobs.set_index("job_id").median_wait_s).astype(float)
    work = ((m.final_finish_us - m.final_schedule_us).astype(float) / 1e6 - m.slow_start_s).clip(lower=0.0)
    s, r = m.severity.astype(float), (m.machine_slowdown.astype(float) / M.TYPICAL_SLOWDOWN).clip(lower=1.0)
    out = pd.DataFrame({"job_id": m.job_id, "task_id": m.task_id, "latency_s": m.latency_s})
    for c in CAUSES:
        out[c] = 0.0
    for c in _WORK_CAUSES:
        out[c] = np.where(m.cause == c, work * s / (1.0 + s), 0.0)
    out[M.LIMITED_PROCESSOR] = work * (1.0 - 1.0 / (np.where(m.cause == M.LIMITED_PROCESSOR, 1.0 + s, 1.0) * r))
    extra_wait = (m.sched_delay - wait_med.fillna(m.sched_delay)).clip(lower=0.0).fillna(0.0)
    out[M.QUEUEING_DELAY] = extra_wait + m.slow_start_s
    out[M.EVICTION] = m.evict_lost_s.astype(float)
    return out


def straggler_causes(added: pd.DataFrame, quantile: float = STRAGGLER_QUANTILE) -> pd.DataFrame:
    """The stragglers among ``added``'s tasks (``cause_added_s``) with the set of causes that explain each:
    latency above the job's ``quantile`` (over the finished tasks Hound sees), and cause c explains it
    when latency minus the time c added is no longer above that threshold. Columns job_id, task_id,
    causes (a set, empty when nothing explains the straggler)."""
    thr = added.groupby("job_id").latency_s.transform(lambda x: x.quantile(quantile))
    s = added[added.latency_s > thr]
    t = thr[s.index]
    explained = {c: (s.latency_s - s[c] <= t).to_numpy() for c in CAUSES}
    causes = [{c for c in CAUSES if explained[c][i]} for i in range(len(s))]
    return pd.DataFrame({"job_id": s.job_id.to_numpy(), "task_id": s.task_id.to_numpy(), "causes": causes})


def straggler_mixtures(added: pd.DataFrame, quantile: float = STRAGGLER_QUANTILE) -> dict:
    """job -> {cause: share of the job's stragglers it explains} (``straggler_causes``): what Hound's
    weights estimate ("the fraction of stragglers attributed to each cause", Section 5.1). Unexplained
    stragglers count in the denominator, and one can be explained by several causes, so a job's shares
    need not sum to 1; a job none of whose stragglers is explained gets {} (not scored)."""
    out = {j: {} for j in added.job_id.unique()}
    for job, g in straggler_causes(added, quantile).groupby("job_id"):
        counts = pd.Series([c for cs in g.causes for c in cs], dtype=object).value_counts()
        order = sorted(counts.index, key=lambda c: (-counts[c], CAUSES.index(c)))   # ties: Table 7's order
        out[job] = {c: counts[c] / len(g) for c in order}
    return out


def diagnosed_mixtures(job_causes: pd.DataFrame, jobs: list) -> dict:
    """job -> {named cause: weight} (unnamed topics kept under their keyword label)."""
    out = {j: {} for j in jobs}
    for r in job_causes.itertuples(index=False):
        if r.job_id in out:
            out[r.job_id][r.cause] = out[r.job_id].get(r.cause, 0.0) + float(r.weight)
    return out


def dominant(mix: dict) -> str | None:
    """The cause with the largest weight (the first one on a tie); None for an empty mixture."""
    return max(mix, key=mix.get) if mix else None


def majority(mix: dict) -> str | None:
    """Hound's dominant cause (Section 5.1): the cause that "explains the majority of a job's
    stragglers", weight > 1/2; None when no cause does ("not every job has a dominant cause")."""
    return next((c for c, w in mix.items() if w > 0.5), None)


def _scores(answers: dict, truth: dict) -> dict:
    """Dominant-cause accuracy (the largest weight on both sides); majority accuracy (Hound's own
    definition of dominant, ``majority``: both name the same majority cause, or both have none);
    micro precision/recall of the cause sets; macro (mean over jobs)."""
    hit = hit_major = n_ans = n_true = inter = 0
    precs, recs = [], []
    for job, t in truth.items():
        a = answers.get(job, {})
        hit += dominant(a) == dominant(t)
        hit_major += majority(a) == majority(t)
        sa, st = {c for c in a if c in CAUSES}, set(t)
        i = len(sa & st)
        inter, n_ans, n_true = inter + i, n_ans + len(sa), n_true + len(st)
        precs.append(i / len(sa) if sa else 0.0)
        recs.append(i / len(st))
    n = len(truth)
    return {"jobs": n, "dominant_accuracy": hit / n if n else np.nan,
            "majority_accuracy": hit_major / n if n else np.nan,
            "precision": inter / n_ans if n_ans else 0.0, "recall": inter / n_true if n_true else np.nan,
            "precision_macro": float(np.mean(precs)) if n else np.nan,
            "recall_macro": float(np.mean(recs)) if n else np.nan}


def _label(mix: dict) -> str:
    return ";".join(f"{c}:{w:.2f}" for c, w in sorted(mix.items(), key=lambda kv: -kv[1]))


def validate(job_causes: pd.DataFrame, truth_jobs: pd.DataFrame, jobs: list,
             stragglers: dict | None = None,
             answers: dict[str, pd.DataFrame] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``hound_validation``: per diagnosed job the planted, effective and diagnosed mixtures, and the
    summary of Hound vs the baseline that always answers data skew, against each truth (``TRUTHS``).
    Jobs Hound left without any cause count as wrong (dominant) and add nothing to precision; a job
    whose truth is empty (no task touched by a cause) is not scored against that truth. ``answers``:
    other answers scored the same way, name -> rows job_id, cause, weight (e.g. ``hound_with_nodes``,
    ``machine_evidence``); each adds a summary row per truth after Hound's, with that name as method.
    The per-job table is Hound's only (``answer_per_job`` gives another answer's)."""
    tj = truth_jobs.set_index("job_id")
    missing = [j for j in jobs if j not in tj.index]
    if missing:
        raise LookupError(f"{len(missing)} jobs have no ground truth (e.g. job {missing[0]}): the truth files "
                          f"do not belong to this trace")
    truths = {name: {j: parse_causes(tj.at[j, col]) for j in jobs} for name, col in TRUTHS.items()}
    hound = diagnosed_mixtures(job_causes, jobs)
    baseline = {j: {BASELINE_CAUSE: 1.0} for j in jobs}
    rows = []
    for j in jobs:
        p, e, a = truths["planted"][j], truths["effective"][j], hound[j]
        rows.append({"job_id": j, "planted": _label(p), "effective": _label(e), "diagnosed": _label(a),
                     "planted_dominant": dominant(p), "effective_dominant": dominant(e),
                     "diagnosed_dominant": dominant(a),
                     "planted_majority": majority(p), "effective_majority": majority(e),
                     "diagnosed_majority": majority(a)})
    per_job = _with_matches(pd.DataFrame(rows))
    summary = []
    if stragglers is not None:   # the third truth, over the stragglers Hound sees (``straggler_mixtures``)
        t = truths[PRIMARY_TRUTH] = {j: stragglers.get(j, {}) for j in jobs}
        per_job[PRIMARY_TRUTH] = [_label(t[j]) for j in jobs]
        per_job[f"{PRIMARY_TRUTH}_dominant"] = [dominant(t[j]) for j in jobs]
        per_job = _with_matches(per_job)
    for name, truth in truths.items():
        truth = {j: t for j, t in truth.items() if t}
        best = best_constant(truth)
        summary += [{"truth": name, "method": "hound", "answers": "Hound's mixture", **_scores(hound, truth)},
                    *({"truth": name, "method": method, "answers": method,
                       **_scores(diagnosed_mixtures(other, jobs), truth)} for method, other in (answers or {}).items()),
                    {"truth": name, "method": f"always_{BASELINE_CAUSE}", "answers": BASELINE_CAUSE,
                     **_scores(baseline, truth)},
                    {"truth": name, "method": BEST_CONSTANT, "answers": best,
                     **_scores({j: {best: 1.0} for j in jobs}, truth)}]
    return per_job, pd.DataFrame(summary)



def _with_matches(per_job: pd.DataFrame) -> pd.DataFrame:
    """The per-job table's match columns, from its ``*_dominant`` and ``*_majority`` columns (the
    stragglers truth's when it is there)."""
    out = per_job.assign(dominant_match=per_job.planted_dominant == per_job.diagnosed_dominant,
                         effective_match=per_job.effective_dominant.notna()
                         & (per_job.effective_dominant == per_job.diagnosed_dominant))
    for truth in ("planted", "effective"):   # None == None: neither has a majority cause, a match
        out[f"{truth}_majority_match"] = [a == b for a, b in zip(out[f"{truth}_majority"], out.diagnosed_majority)]
    if f"{PRIMARY_TRUTH}_dominant" in out.columns:
        out[f"{PRIMARY_TRUTH}_match"] = [d is not None and d == a for d, a in
                                         zip(out[f"{PRIMARY_TRUTH}_dominant"], out.diagnosed_dominant)]
    return out


def answer_per_job(per_job: pd.DataFrame, job_causes: pd.DataFrame) -> pd.DataFrame:
    """``validate``'s per-job table with another answer (rows job_id, cause, weight) in place of Hound's
    diagnosed columns and matches, e.g. for ``recall_by_cause`` of that answer."""
    mix = diagnosed_mixtures(job_causes, list(per_job.job_id))
    return _with_matches(per_job.assign(diagnosed=[_label(mix[j]) for j in per_job.job_id],
                                        diagnosed_dominant=[dominant(mix[j]) for j in per_job.job_id],
                                        diagnosed_majority=[majority(mix[j]) for j in per_job.job_id]))


def recall_by_cause(per_job: pd.DataFrame) -> pd.DataFrame:
    """Per truth (each ``<truth>_dominant`` column of ``validate``'s per-job table) and per cause that
    is some job's dominant one: the jobs where it is dominant, how many of them Hound's dominant answer
    names (``recall``, the cause's share of the dominant accuracy), and how many jobs Hound answers it
    for (``answered``; ``precision`` = hits / answered): which causes Hound's accuracy comes from."""
    rows = []
    for truth in (*TRUTHS, PRIMARY_TRUTH):
        col = f"{truth}_dominant"
        if col not in per_job.columns:
            continue
        scored = per_job[per_job[col].notna()]
        for c in sorted(set(scored[col]), key=CAUSES.index):
            mine = scored[scored[col] == c]
            hits = int((mine.diagnosed_dominant == c).sum())
            answered = int((scored.diagnosed_dominant == c).sum())
            rows.append({"truth": truth, "cause": c, "jobs": len(mine), "hound_hits": hits,
                         "recall": hits / len(mine), "answered": answered,
                         "precision": hits / answered if answered else np.nan})
    return pd.DataFrame(rows, columns=["truth", "cause", "jobs", "hound_hits", "recall", "answered", "precision"])


def metadata_key(key: str, truth: str) -> str:
    """Asset metadata key of a number scored against ``truth``: bare for the check's truth
    (``PRIMARY_TRUTH``), suffixed with the truth's name for the others."""
    return key if truth == PRIMARY_TRUTH else f"{key}_{truth}"


def best_constant(truth: dict) -> str:
    """The one cause that, answered for every job, scores best on dominant accuracy against ``truth``:
    its most common dominant cause (ties: Table 7's order). It is chosen knowing the truth, so it is
    a reference for what a constant answer can reach, not a method."""
    doms = pd.Series([dominant(t) for t in truth.values() if t], dtype=object).value_counts()
    return min(doms.index, key=lambda c: (-doms[c], CAUSES.index(c))) if len(doms) else BASELINE_CAUSE


def n_causes_table(job_causes: pd.DataFrame, truth_jobs: pd.DataFrame, jobs: list) -> pd.DataFrame:
    """Table 6: share of jobs with 1..5 causes: Hound's paper, the planted truth, our diagnosis."""
    named = job_causes[job_causes.named & job_causes.job_id.isin(jobs)]
    ours = named.groupby("job_id").size().reindex(jobs, fill_value=0)
    tj = truth_jobs.set_index("job_id")
    counts = {name: pd.Series({j: len(parse_causes(c)) for j, c in tj[col].items() if j in set(jobs)}, dtype=float)
              for name, col in TRUTHS.items()}

    def share(x: pd.Series, hit) -> float:
        return float(hit(x).mean()) if len(x) else np.nan

    rows = []
    for k in [*range(0, 6), ">5"]:
        hit = (lambda x: x > 5) if k == ">5" else (lambda x, k=k: x == k)
        rows.append({"n_causes": k, "hound_paper": HOUND_N_CAUSES_P[k - 1] if k not in (0, ">5") else 0.0,
                     "planted": share(counts["planted"], hit), "effective": share(counts["effective"], hit),
                     "diagnosed": share(ours, hit)})
    return pd.DataFrame(rows)


def coverage_table(job_causes: pd.DataFrame, truth_jobs: pd.DataFrame | None, jobs: list,
                   stragglers: dict | None = None) -> pd.DataFrame:
    """Table 7: coverage (share of jobs where the cause explains some stragglers) and dominant coverage
    (share where it explains the majority, weight > 1/2), Hound's paper beside ours and the truths
    (``stragglers``: ``straggler_mixtures``, over the jobs it scores)."""
    mix = diagnosed_mixtures(job_causes, jobs)
    truths = ({name: {j: parse_causes(v) for j, v in truth_jobs.set_index("job_id")[col].items() if j in set(jobs)}
               for name, col in TRUTHS.items()} if truth_jobs is not None else {})
    if stragglers is not None:
        truths[PRIMARY_TRUTH] = {j: stragglers[j] for j in jobs if stragglers.get(j)}
    n = max(len(jobs), 1)
    rows = []
    for c in CAUSES:
        row = {"cause": c, "coverage_paper": HOUND_COVERAGE[c], "dominant_paper": HOUND_DOMINANT_COVERAGE[c],
               "coverage": sum(c in m for m in mix.values()) / n,
               "dominant": sum(m.get(c, 0) > 0.5 for m in mix.values()) / n}
        for name in truths:
            if truths.get(name):
                t = truths[name]
                row[f"coverage_{name}"] = sum(c in m for m in t.values()) / len(t)
                row[f"dominant_{name}"] = sum(m.get(c, 0) > 0.5 for m in t.values()) / len(t)
        rows.append(row)
    return pd.DataFrame(rows)
