"""The share-weighting variants tried on the dev traces (docs/HOUND.md).

Each variant re-weights the stored ``hound_profiles`` (a learner's words and signs kept, their weights
replaced) and re-runs Algorithms 3-4 and the naming for each LDA seed, then scores the dominant cause
against the stragglers truth. Variants, joined with '+' (e.g. ``share+mult_all``):

- ``strength``: the stored profiles, unchanged (Hound as it is);
- ``share``: Cliff's delta between the job's stragglers and its normal tasks (``straggler_shares``);
  ``median``: instead 2 (P(x_S > median of the normal tasks) - 1/2), signed by the larger side;
- ``mult_all``: divided by the multiplicity over the job's tasks (``multiplicity``; with ``share``,
  what ``profile_weights = "share"`` does); ``mult_str``: the multiplicity over its stragglers only;
- ``nogate``: every learner gets the share profile itself (the learners' words ignored);
- ``sig``: a metric's share kept only where the Wilcoxon rank-sum test rejects at 0.05 (Section 5.2);
- ``vocab``: a bound, not a method: each word's share divided by the number of words of its Table 4
  cause, so each named cause counts once (Hound's LDA does not know the names).

    python -m studies.hound.hound_share_variants --data-dir /tmp/d7 \
        --variants strength,share,share+mult_all [--seeds 0,1,2,3,4]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.learners import absolute_sum_one, job_matrix, multiplicity, straggler_shares
from stragglers.diagnosis.run import diagnose
from stragglers.diagnosis.truth import (BEST_CONSTANT, PRIMARY_TRUTH, STRAGGLER_QUANTILE, cause_added_s,
                                       recall_by_cause, straggler_mixtures, validate)
from stragglers.diagnosis.vocabulary import CAUSE_WORDS, METRIC_COLUMNS, METRICS, WORD_CAUSE

from studies.hound.hound_seeds import read_run

NAMES = [METRICS[c] for c in METRIC_COLUMNS]


def median_share(X: np.ndarray, s: np.ndarray) -> np.ndarray:
    med = np.median(X[~s], axis=0)
    up = (X[s] > med).mean(0) - (X[~s] > med).mean(0)
    down = (X[s] < med).mean(0) - (X[~s] < med).mean(0)
    return 2 * np.where(np.abs(up) >= np.abs(down), up, -down)


def words_per_cause(share: np.ndarray) -> np.ndarray:
    n = lambda word: len(CAUSE_WORDS.get(WORD_CAUSE.get(word), ())) or 1  # noqa: E731
    return np.array([n(f"{m}(+)") if v > 0 else n(f"{m}(-)") for m, v in zip(NAMES, share)], dtype=float)


def reweight(profiles: pd.DataFrame, inputs: pd.DataFrame, variant: set) -> pd.DataFrame:
    out = []
    for job, g in inputs.groupby("job_id", sort=True):
        X, y, _ = job_matrix(g)
        s = y > np.quantile(y, STRAGGLER_QUANTILE)
        share = median_share(X, s) if "median" in variant else straggler_shares(X, y, STRAGGLER_QUANTILE)
        if "sig" in variant:
            p = np.array([mannwhitneyu(X[s, j], X[~s, j]).pvalue if np.ptp(X[:, j]) > 0 else 1.0
                          for j in range(X.shape[1])])
            share = np.where(p < 0.05, share, 0.0)
        m = np.ones(X.shape[1])
        if "mult_all" in variant:
            m = multiplicity(X)
        if "mult_str" in variant:
            m = multiplicity(X[s])
        if "vocab" in variant:
            m = words_per_cause(share)
        for learner, q in profiles[profiles.job_id == job].groupby("learner", sort=False):
            c = q.set_index("metric").weight.reindex(NAMES).fillna(0.0).to_numpy()
            sign = np.sign(share) if "nogate" in variant else np.sign(c)
            w = absolute_sum_one(sign * np.clip(sign * share, 0, None) / m)
            out.append(pd.DataFrame({"job_id": job, "learner": learner, "metric": NAMES, "weight": w,
                                     "n_tasks": len(y), "n_imputed": 0}))
    return pd.concat(out, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.hound.hound_share_variants")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--variants", default="strength,share,share+mult_all")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    profiles, inputs, tj, tt = read_run(args.data_dir)
    mix = straggler_mixtures(cause_added_s(tt, tj, inputs))
    jobs = sorted(profiles.job_id.unique())
    print("| trace | variant | dominant accuracy, LDA seeds | best constant | limited-processor hits |")
    print("|---|---|---|---|---|")
    for name in args.variants.split(","):
        variant = set(name.split("+"))
        p = profiles if variant == {"strength"} else reweight(profiles, inputs, variant)
        accs, hits = [], []
        for seed in (int(x) for x in args.seeds.split(",")):
            per_job, s = validate(diagnose(p, HoundSettings(seed=seed)).job_causes, tj, jobs, mix)
            s = s.set_index(["truth", "method"])
            accs.append(s.loc[(PRIMARY_TRUTH, "hound")].dominant_accuracy)
            best = s.loc[(PRIMARY_TRUTH, BEST_CONSTANT)].dominant_accuracy
            r = recall_by_cause(per_job)
            r = r[(r.truth == PRIMARY_TRUTH) & (r.cause == "limited_processor")]
            hits.append((int(r.hound_hits.sum()), int(r.jobs.sum())))
        print(f"| {args.data_dir} | {name} | {', '.join(f'{a:.3f}' for a in accs)} | {best:.3f} | "
              f"{', '.join(str(h) for h, _ in hits)} of {hits[0][1]} |", flush=True)


if __name__ == "__main__":
    main()
