"""Can a share of stragglers name a job's dominant cause?

Hound's weights "estimate the fraction of stragglers attributed to each cause" (Section 5.1). Its
learners weigh dependence strength instead. This script reads, per job and with no LDA and no
ensemble, what the share of stragglers says (``learners.straggler_shares``: per metric, Cliff's
delta between the job's stragglers, latency above its p90, and its normal tasks), and scores the
named cause it points to against the stragglers truth the check uses (``straggler_mixtures``).
Nothing is fitted. Three readings of the Table 4 words' shares:

- ``share, words summed``: the named cause whose words hold the most share;
- ``share / multiplicity, summed``: the same after dividing each metric's share by its
  multiplicity (``learners.multiplicity``), what ``profile_weights = "share"`` gives a learner
  that keeps every word;
- ``share, one word per cause``: the cause whose single strongest word is the strongest. Each cause
  counts once however many of its metrics move together. It uses Table 4's names, which Hound's
  LDA does not have, so it bounds what any collapse of co-moving metrics can do.

On the jobs whose dominant truth is limited processor it also prints how many show the signature at
all: MEAN_CPU lower for stragglers at p < 0.05 (the Wilcoxon rank-sum test of Hound's case studies,
Section 5.2), some data-skew word higher at p < 0.05, the median shares, and how often a data-skew
word's share beats MEAN_CPU(-)'s in a job where data skew explains no straggler.

    python -m studies.hound.hound_shares --data-dir /tmp/d7 [--data-dir /tmp/d13 ...]
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from stragglers.diagnosis.learners import job_matrix, multiplicity, share_weighted, straggler_shares
from stragglers.diagnosis.truth import (STRAGGLER_QUANTILE, best_constant, cause_added_s, dominant,
                                       straggler_mixtures)
from stragglers.diagnosis.vocabulary import CAUSE_WORDS, METRIC_COLUMNS, WORD_CAUSE, WORDS, words_of
from stragglers.traces.synth import model as M

from studies.hound.hound_seeds import read_run

LP = M.LIMITED_PROCESSOR
DS_METRICS = [METRIC_COLUMNS.index(c) for c in ("mean_mem", "peak_mem", "mem_assign", "page_cache",
                                                "page_cache_um", "disk_space")]
CPU = METRIC_COLUMNS.index("mean_cpu")


def reading(profile: np.ndarray, how: str) -> str | None:
    """The named cause a signed per-metric profile points to: words summed per cause, or its strongest word."""
    by = Counter()
    for w, p in zip(WORDS, words_of(profile)):
        c = WORD_CAUSE.get(w)
        if c:
            by[c] = by[c] + p if how == "sum" else max(by[c], p)
    return max(by, key=lambda c: (by[c], -M.CAUSES.index(c))) if sum(by.values()) > 0 else None


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.hound.hound_shares")
    ap.add_argument("--data-dir", action="append", required=True)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    print("| trace | jobs | best constant in hindsight | reading | dominant accuracy | limited-processor recall | "
          "its answers on those jobs |")
    print("|---|---|---|---|---|---|---|")
    notes = []
    for d in args.data_dir:
        _, inputs, tj, tt = read_run(d)
        mix = straggler_mixtures(cause_added_s(tt, tj, inputs))
        truth = {j: dominant(m) for j, m in mix.items() if m}
        answers = {"share, words summed": {}, "share / multiplicity, summed": {}, "share, one word per cause": {}}
        lp_rows = []
        for job, g in inputs.groupby("job_id"):
            if job not in truth:
                continue
            X, y, _ = job_matrix(g)
            sh = straggler_shares(X, y, STRAGGLER_QUANTILE)
            answers["share, words summed"][job] = reading(sh, "sum")
            answers["share / multiplicity, summed"][job] = reading(share_weighted(np.sign(sh), sh, multiplicity(X)),
                                                                   "sum")
            answers["share, one word per cause"][job] = reading(sh, "max")
            if truth[job] == LP:
                s = y > np.quantile(y, STRAGGLER_QUANTILE)
                p = lambda j, alt: (mannwhitneyu(X[s, j], X[~s, j], alternative=alt).pvalue
                                    if np.ptp(X[:, j]) > 0 else 1.0)
                lp_rows.append({"cpu_share": sh[CPU], "ds_share": max(sh[j] for j in DS_METRICS),
                                "cpu_low": p(CPU, "less") < 0.05, "no_ds": M.DATA_SKEW not in mix[job],
                                "ds_high": any(p(j, "greater") < 0.05 for j in DS_METRICS)})
        jobs = sorted(truth)
        best = best_constant({j: {truth[j]: 1.0} for j in jobs})
        lp = [j for j in jobs if truth[j] == LP]
        for name, a in answers.items():
            acc = np.mean([a[j] == truth[j] for j in jobs])
            top = ", ".join(f"{c} {n}" for c, n in Counter(a[j] for j in lp).most_common(3))
            print(f"| {Path(d).name} | {len(jobs)} | {np.mean([truth[j] == best for j in jobs]):.3f} ({best}) | "
                  f"{name} | {acc:.3f} | {sum(a[j] == LP for j in lp)}/{len(lp)} | {top} |")
        r = pd.DataFrame(lp_rows)
        if len(r):
            notes.append(f"- {Path(d).name}, {len(r)} limited-processor-dominant jobs: MEAN_CPU lower for the "
                         f"stragglers at p < 0.05 in {int(r.cpu_low.sum())}, some data-skew word higher in "
                         f"{int(r.ds_high.sum())}; median share of MEAN_CPU(-) {-r.cpu_share.median():.2f}, of the "
                         f"strongest data-skew word {r.ds_share.median():+.2f}; the data-skew word beats "
                         f"MEAN_CPU(-) in {int((r.ds_share > -r.cpu_share).sum())}, and in "
                         f"{int(((r.ds_share > -r.cpu_share) & r.no_ds).sum())} of these data skew explains no "
                         f"straggler")
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
