"""How much Hound's check against the planted causes depends on the meta-learning seed.

Reads the ``hound_profiles`` already in the warehouse (materialize ``*hound_job_causes`` on the
embedded trace first), re-runs Algorithms 3-4 and the naming for each seed (the seed of the
documents' word draws and of LDA; the profiles stay fixed) and prints hound_validation's summary
per seed and truth (planted, effective, and the stragglers': the share of each job's finished
stragglers each cause explains, counterfactually, ``straggler_mixtures``) beside the always-data-skew
baseline and the best constant answer in hindsight.

``--weights share`` (or ``strength,share``) also scores the profiles' share weighting
(``HoundSettings.profile_weights = "share"``), computed from the stored profiles and
inputs (``run.share_weighted_profiles``; the same rows as re-running the learners with it).

    python -m studies.hound.hound_seeds [--data-dir data] [--seeds 0,1,2,3,4] [--weights strength,share]
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import duckdb
import pandas as pd

from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.run import diagnose, share_weighted_profiles
from stragglers.diagnosis.truth import (BASELINE_CAUSE, BEST_CONSTANT, PRIMARY_TRUTH, TRUTHS, cause_added_s,
                                       load_truth, recall_by_cause, straggler_mixtures, validate)
from stragglers.traces.fetch import truth_dir


def read_run(data_dir: str):
    """The embedded trace's Hound profiles and inputs (a materialized warehouse) and its truth
    files: (profiles, inputs, truth_jobs, truth_tasks)."""
    with duckdb.connect(str(Path(data_dir) / "warehouse.duckdb"), read_only=True) as con:
        profiles = con.execute("SELECT * EXCLUDE (trace) FROM hound_profiles WHERE trace = 'synthetic'").df()
        inputs = con.execute("SELECT * EXCLUDE (trace) FROM hound_inputs WHERE trace = 'synthetic'").df()
    return (profiles, inputs, *load_truth(truth_dir(data_dir, "synthetic")))


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.hound.hound_seeds")
    ap.add_argument("--data-dir", default="data")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--weights", default="strength", help="profile weights to score: strength, share, or both")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    profiles, inputs, truth_jobs, truth_tasks = read_run(args.data_dir)
    stragglers = straggler_mixtures(cause_added_s(truth_tasks, truth_jobs, inputs))
    jobs = sorted(profiles.job_id.unique())
    for weights in args.weights.split(","):
        p = profiles if weights == "strength" else share_weighted_profiles(
            profiles, inputs, HoundSettings(profile_weights=weights))
        print(f"\n### profile weights: {weights}\n")
        print("| seed | ensemble topics | truth | dominant accuracy | majority accuracy | precision | recall | "
              "baseline dominant accuracy | baseline majority accuracy | baseline precision | baseline recall | "
              "best constant in hindsight |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        recalls = []
        for seed in (int(s) for s in args.seeds.split(",")):
            d = diagnose(p, HoundSettings(seed=seed, profile_weights=weights))
            per_job, s = validate(d.job_causes, truth_jobs, jobs, stragglers)
            s = s.set_index(["truth", "method"])
            recalls.append(recall_by_cause(per_job).assign(seed=seed))
            for truth in (*TRUTHS, PRIMARY_TRUTH):
                h, b = s.loc[(truth, "hound")], s.loc[(truth, f"always_{BASELINE_CAUSE}")]
                c = s.loc[(truth, BEST_CONSTANT)]
                print(f"| {seed} | {len(d.ensemble.topics)} | {truth} | {h.dominant_accuracy:.3f} | "
                      f"{h.majority_accuracy:.3f} | {h.precision:.3f} | {h.recall:.3f} | {b.dominant_accuracy:.3f} | "
                      f"{b.majority_accuracy:.3f} | {b.precision:.3f} | {b.recall:.3f} | "
                      f"{c.dominant_accuracy:.3f} ({c.answers}) |", flush=True)

        r = pd.concat(recalls)
        r = r[r.truth == PRIMARY_TRUTH]
        print(f"\nPer cause, the {PRIMARY_TRUTH} truth ({weights} weights): Hound's recall (hits / jobs where the "
              f"cause is dominant) and how often Hound answers it, by seed\n")
        print("| cause | jobs | " + " | ".join(f"seed {x}" for x in r.seed.unique()) + " |")
        print("|---|---|" + "---|" * r.seed.nunique())
        for c, g in r.groupby("cause", sort=False):
            print(f"| {c} | {g.jobs.iloc[0]} | " + " | ".join(f"{h}/{n} (answered {a})" for h, n, a in
                                                           zip(g.hound_hits, g.jobs, g.answered)) + " |")


if __name__ == "__main__":
    main()
