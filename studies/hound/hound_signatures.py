"""Which signature each cause of a straggler leaves in Hound's metrics, and which learner sees it.

Reads a data directory where ``*hound_job_causes`` was materialized on the embedded trace (any
generator seed) and prints:

1. per cause, over the finished stragglers that cause alone explains (``straggler_causes``: the
   counterfactual stragglers truth the check scores against), the median within-job z of every
   Hound metric against the job's normal tasks (latency at most the job's p90):
   z = (x - median of the normal tasks) / their sd. "none" = stragglers no cause explains.
2. the same for the normal tasks on clearly slow machines (slowdown >= the 90th percentile of the
   machines that ran normal tasks), to show what the machine alone does to a task's metrics;
3. per learner, the mean profile weight of the limited-processor words (MEAN_CPU, PEAK_CPU), of the
   data-skew words and of CPI, over the jobs whose stragglers' dominant cause is limited processor
   and over the others;
4. the ensemble's named topics and Hound's dominant answer for those limited-processor jobs;
5. where the answer is lost: per learner, the dominant cause read from its profile alone (the named
   cause whose Table 4 words hold the most profile mass, no LDA), from its single largest word, and
   from its own LDA mixture (its topics named as the ensemble's are), beside the ensemble (Hound):
   dominant accuracy and recall on the limited-processor-dominant jobs.

    python -m studies.hound.hound_signatures --data-dir /tmp/data [--seed 0]
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter

import numpy as np
import pandas as pd

from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.learners import LEARNERS
from stragglers.diagnosis.run import diagnose, profile_matrix
from stragglers.diagnosis.truth import (cause_added_s, diagnosed_mixtures, dominant, straggler_causes,
                                       straggler_mixtures)
from stragglers.diagnosis.vocabulary import CAUSE_WORDS, METRICS, WORD_CAUSE, WORDS, name_topic, words_of
from stragglers.traces.synth import model as M

from studies.hound.hound_seeds import read_run

SHOWN = ("mean_cpu", "peak_cpu", "cpi", "cache_miss", "mean_mem", "page_cache", "disk_space", "mean_io",
         "sched_delay", "evict")


def full_inputs(data_dir: str) -> pd.DataFrame:
    import duckdb
    from pathlib import Path
    with duckdb.connect(str(Path(data_dir) / "warehouse.duckdb"), read_only=True) as con:
        return con.execute("SELECT * EXCLUDE (trace) FROM hound_inputs WHERE trace = 'synthetic'").df()


def zscores(inputs: pd.DataFrame, normal: pd.Series) -> pd.DataFrame:
    """Per task and metric, z against its job's normal tasks (median, sd)."""
    out = []
    for _, g in inputs.groupby("job_id"):
        ref = g[normal[g.index]]
        med, sd = ref[list(SHOWN)].median(), ref[list(SHOWN)].std()
        z = (g[list(SHOWN)] - med) / sd.where(sd > 0)
        out.append(z)
    return pd.concat(out).reindex(inputs.index)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.hound.hound_signatures")
    ap.add_argument("--data-dir", default="data")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    profiles, _, tj, tt = read_run(args.data_dir)
    inputs = full_inputs(args.data_dir)
    added = cause_added_s(tt, tj, inputs[["job_id", "task_id", "latency_s", "sched_delay"]])
    sc = straggler_causes(added)
    key = list(zip(inputs.job_id, inputs.task_id))
    causes_of = {(j, t): c for j, t, c in zip(sc.job_id, sc.task_id, sc.causes)}
    is_strag = pd.Series([k in causes_of for k in key], index=inputs.index)
    z = zscores(inputs, ~is_strag)
    slow = inputs.merge(tt.rename(columns={"task_index": "task_id"})[["job_id", "task_id", "machine_slowdown",
                                                                      "cause"]],
                        on=["job_id", "task_id"], how="left")
    slow.index = inputs.index
    label = []
    for k in key:
        cs = causes_of.get(k)
        label.append(None if cs is None else ("none" if not cs else (next(iter(cs)) if len(cs) == 1 else "several")))
    label = pd.Series(label, index=inputs.index)
    print(f"## {args.data_dir}: {inputs.job_id.nunique()} jobs, {len(inputs)} finished tasks, "
          f"{int(is_strag.sum())} stragglers\n")
    print("1. Median within-job z of each metric (against the job's normal tasks), stragglers by their sole "
          "explaining cause\n")
    print("| stragglers explained only by | n | " + " | ".join(METRICS[c] for c in SHOWN) + " | machine slowdown |")
    print("|---|---|" + "---|" * (len(SHOWN) + 1))
    for c in [*M.CAUSES, "several", "none"]:
        sel = label == c
        if sel.sum() < 5:
            continue
        med = z[sel].median()
        print(f"| {c} | {int(sel.sum())} | " + " | ".join(f"{med[m]:+.2f}" for m in SHOWN)
              + f" | {slow.machine_slowdown[sel].median():.3f} |")
    normal = ~is_strag
    thr = slow.machine_slowdown[normal].quantile(0.9)
    for name, sel in ((f"normal tasks, machine slowdown >= {thr:.3f}", normal & (slow.machine_slowdown >= thr)),
                      ("normal tasks, all", normal)):
        med = z[sel].median()
        print(f"| {name} | {int(sel.sum())} | " + " | ".join(f"{med[m]:+.2f}" for m in SHOWN)
              + f" | {slow.machine_slowdown[sel].median():.3f} |")
    # within-job Spearman of latency with machine slowdown and with MEAN_CPU
    rho = []
    for _, g in slow.groupby("job_id"):
        rho.append({"slowdown_vs_latency": g.machine_slowdown.corr(g.latency_s, method="spearman"),
                    "slowdown_vs_mean_cpu": g.machine_slowdown.corr(g.mean_cpu, method="spearman"),
                    "mean_cpu_vs_latency": g.mean_cpu.corr(g.latency_s, method="spearman"),
                    "cpi_vs_latency": g.cpi.corr(g.latency_s, method="spearman"),
                    "mean_mem_vs_latency": g.mean_mem.corr(g.latency_s, method="spearman")})
    rho = pd.DataFrame(rho).median()
    print("\nMedian within-job Spearman: " + ", ".join(f"{k} {v:+.3f}" for k, v in rho.items()))

    mix = straggler_mixtures(added)
    lp_jobs = {j for j, m in mix.items() if dominant(m) == M.LIMITED_PROCESSOR}
    jobs = sorted(profiles.job_id.unique())
    print(f"\n3. Mean profile weight per learner (limited-processor-dominant jobs: {len(lp_jobs)} of "
          f"{sum(1 for j in jobs if mix.get(j))} scored)\n")
    print("| learner | jobs | MEAN_CPU | PEAK_CPU | CPI | data-skew words (sum) | SCHED_DELAY | EVICT | "
          "share of |weight| on LP words | on data-skew words |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ds = [w[:-3] for w in CAUSE_WORDS[M.DATA_SKEW]]
    for learner in LEARNERS:
        p = profiles[profiles.learner == learner].pivot(index="job_id", columns="metric", values="weight").fillna(0)
        for name, js in (("LP-dominant", [j for j in p.index if j in lp_jobs]),
                         ("other scored", [j for j in p.index if j not in lp_jobs and mix.get(j)])):
            q = p.loc[js]
            lp_share = (q[["MEAN_CPU", "PEAK_CPU"]].clip(upper=0).abs().sum(axis=1)).mean()
            ds_share = (q[ds].clip(lower=0).sum(axis=1)).mean()
            print(f"| {learner} {name} | {len(js)} | {q.MEAN_CPU.mean():+.3f} | {q.PEAK_CPU.mean():+.3f} | "
                  f"{q.CPI.mean():+.3f} | {q[ds].sum(axis=1).mean():+.3f} | {q.SCHED_DELAY.mean():+.3f} | "
                  f"{q.EVICT.mean():+.3f} | {lp_share:.3f} | {ds_share:.3f} |")
    d = diagnose(profiles, HoundSettings(seed=args.seed))
    ens = d.topics[d.topics.learner == "ENS"]
    print("\n4. Ensemble topics (LDA seed %d)\n" % args.seed)
    for r in ens.itertuples():
        print(f"- {r.topic} [{r.cause}] {r.keywords} ({r.weights}) from {r.cluster}; coverage {r.coverage:.2f}")
    for learner in LEARNERS:
        t = d.topics[d.topics.learner == learner]
        lp = t[t.cause == M.LIMITED_PROCESSOR]
        print(f"- {learner}: {len(t)} topics; limited-processor topics: "
              + ("; ".join(f"{r.topic} {r.keywords} -> {r.cluster}" for r in lp.itertuples()) or "none"))
    dm = diagnosed_mixtures(d.job_causes, jobs)
    ans = Counter(dominant(dm[j]) for j in lp_jobs)
    print(f"\nHound's dominant answer on the {len(lp_jobs)} limited-processor-dominant jobs: {dict(ans)}")
    per_cause = Counter(dominant(m) for m in mix.values() if m)
    hit = Counter(dominant(mix[j]) for j in jobs if mix.get(j) and dominant(mix[j]) == dominant(dm[j]))
    print("Per truth-dominant cause, Hound's recall: "
          + ", ".join(f"{c} {hit[c]}/{n}" for c, n in per_cause.most_common()))

    truth = {j: dominant(mix.get(j, {})) for j in d.ensemble.jobs}
    scored = [j for j in d.ensemble.jobs if truth[j]]
    answers = {}
    for learner in LEARNERS:
        P = profile_matrix(profiles, learner, d.ensemble.jobs)
        mass, top = {}, {}
        for i, j in enumerate(d.ensemble.jobs):
            w = Counter()
            for word, p in zip(WORDS, words_of(P[i])):
                if word in WORD_CAUSE:
                    w[WORD_CAUSE[word]] += p
            mass[j] = max(w, key=w.get) if sum(w.values()) > 0 else None
            top[j] = WORD_CAUSE.get(WORDS[int(np.argmax(words_of(P[i])))]) if np.abs(P[i]).sum() > 0 else None
        m = d.models[learner]
        names = [name_topic(b) for b in m.beta]
        own = {}
        for i, j in enumerate(m.jobs):
            w = Counter()
            for q, t in enumerate(m.theta[i]):
                if t > 0:
                    w[names[q] or f"unnamed {learner[0]}{q}"] += t
            own[j] = max(w, key=w.get) if w else None
        answers |= {f"{learner} profile mass": mass, f"{learner} largest word": top, f"{learner} own topics": own}
    answers["ensemble (Hound)"] = {j: dominant(dm[j]) for j in d.ensemble.jobs}
    print(f"\n5. Where the answer is lost (LDA seed {args.seed}; {len(scored)} scored jobs, {len(lp_jobs)} "
          f"limited-processor-dominant)\n")
    print("| answer read from | dominant accuracy | limited-processor recall | its answers on those jobs |")
    print("|---|---|---|---|")
    for k, a in answers.items():
        acc = np.mean([a.get(j) == truth[j] for j in scored])
        lp = [j for j in scored if truth[j] == M.LIMITED_PROCESSOR]
        top3 = ", ".join(f"{c} {n}" for c, n in Counter(a.get(j) for j in lp).most_common(3))
        print(f"| {k} | {acc:.3f} | {sum(a.get(j) == M.LIMITED_PROCESSOR for j in lp)}/{len(lp)} | {top3} |")


if __name__ == "__main__":
    main()
