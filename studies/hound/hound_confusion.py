"""Per-job confusion of Hound's diagnosis against the generator's truth.

Reads a data directory where ``*hound_job_causes`` was materialized on the embedded trace (any
generator seed), re-runs Algorithms 3-4 with the run's seed to get each learner's own topic mixture,
and prints per job: the planted and effective mixtures, the stragglers' causes (the share of the
job's finished stragglers, Hound's latency (hound_inputs.latency_s) > the job's p90, that each
cause explains: the task would not straggle had the cause taken its typical time; what Hound's
weights estimate, Section 5.1), Hound's mixture, each learner's top profile metrics and its named
topics, and a one-word verdict. Then a summary of where the errors come from.

    python -m studies.hound.hound_confusion --data-dir data [--seed 0] [--per-job]
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter

import numpy as np
import pandas as pd

from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.learners import LEARNERS
from stragglers.diagnosis.run import diagnose
from stragglers.diagnosis.truth import cause_added_s, dominant, majority, parse_causes, straggler_mixtures
from stragglers.diagnosis.vocabulary import CAUSE_WORDS, METRICS, METRIC_COLUMNS, WORDS, name_topic, words_of

from studies.hound.hound_seeds import read_run


def fmt(m: dict, n: int = 4) -> str:
    return " ".join(f"{k[:10]}:{v:.2f}" for k, v in sorted(m.items(), key=lambda kv: -kv[1])[:n]) or "-"


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.hound.hound_confusion")
    ap.add_argument("--data-dir", default="data")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-job", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    profiles, inputs, tj, tt = read_run(args.data_dir)
    stragglers = straggler_mixtures(cause_added_s(tt, tj, inputs))
    d = diagnose(profiles, HoundSettings(seed=args.seed))
    jobs = d.ensemble.jobs
    jc = d.job_causes
    tjx = tj.set_index("job_id")
    names = [METRICS[c] for c in METRIC_COLUMNS]
    verdicts, rows = Counter(), []
    for i, j in enumerate(jobs):
        planted, eff = parse_causes(tjx.at[j, "causes"]), parse_causes(tjx.at[j, "causes_effective"])
        strag = stragglers.get(j, {})
        diag = {r.cause: r.weight for r in jc[jc.job_id == j].itertuples()}
        learner_txt = []
        for learner in LEARNERS:
            p = profiles[(profiles.job_id == j) & (profiles.learner == learner)].set_index("metric").weight
            p = p.reindex(names).fillna(0)
            top = p.abs().sort_values(ascending=False).index[:3]
            w = words_of(p.to_numpy())
            ds = sum(w[WORDS.index(x)] for x in CAUSE_WORDS["data_skew"])
            ev = w[WORDS.index("EVICT(+)")]
            m = d.models[learner]
            th = {f"{learner[0]}{q}={name_topic(m.beta[q]) or '?'}": m.theta[i, q] for q in range(m.theta.shape[1])
                  if m.theta[i, q] > 0}
            learner_txt.append(f"{learner}: top {', '.join(f'{x}{p[x]:+.2f}' for x in top)}; "
                               f"DS words {ds:.2f} EVICT {ev:.2f}; topics {fmt(th, 3)}")
        t_dom, h_dom = dominant(eff), dominant(diag)
        if h_dom == t_dom:
            v = "right"
        elif h_dom is None:
            v = "nothing"
        elif t_dom in diag:
            v = "right cause, smaller weight"
        elif any(t_dom == name_topic(d.ensemble.topics[e]) for e in range(len(d.ensemble.topics))):
            v = "cause exists as topic, not given to job"
        else:
            v = "cause never an ensemble topic"
        verdicts[v] += 1
        rows.append(dict(job_id=j, killed=bool(tjx.at[j, "job_killed"]), planted_dom=dominant(planted), eff_dom=t_dom,
                         strag_dom=dominant(strag), strag_majority=majority(strag) is not None,
                         hound_dom=h_dom, hound_majority=majority(diag) is not None, verdict=v))
        if args.per_job:
            print(f"\njob {j} killed={bool(tjx.at[j, 'job_killed'])} verdict={v}")
            print(f"  planted   {fmt(planted)}\n  effective {fmt(eff)}\n  stragglers {fmt(strag)}\n  hound     {fmt(diag)}")
            for t in learner_txt:
                print("  " + t)
    df = pd.DataFrame(rows)
    print("\nensemble topics:")
    for e, t in enumerate(d.ensemble.topics):
        print(f"  E{e} {name_topic(t)}: {', '.join(f'{WORDS[k]} {t[k]:.2f}' for k in np.argsort(-t) if t[k] > 0)}")
    print("\nverdicts (vs effective dominant):", dict(verdicts))
    print("\nconfusion, effective dominant (rows) x Hound dominant (cols):")
    print(pd.crosstab(df.eff_dom, df.hound_dom.fillna("none")).to_string())
    print("\nconfusion, stragglers' dominant (rows) x Hound dominant (cols):")
    print(pd.crosstab(df.strag_dom.fillna("none"), df.hound_dom.fillna("none")).to_string())
    print(f"\njobs {len(df)}; argmax accuracy: effective {np.mean(df.eff_dom == df.hound_dom):.3f}, "
          f"planted {np.mean(df.planted_dom == df.hound_dom):.3f}, stragglers {np.mean(df.strag_dom == df.hound_dom):.3f}; "
          f"baseline: effective {np.mean(df.eff_dom == 'data_skew'):.3f}, planted "
          f"{np.mean(df.planted_dom == 'data_skew'):.3f}, stragglers {np.mean(df.strag_dom == 'data_skew'):.3f}")
    print(f"ceiling: an oracle that knows each finished straggler's true causes and answers their most common "
          f"one: planted {np.mean(df.strag_dom == df.planted_dom):.3f}, effective {np.mean(df.strag_dom == df.eff_dom):.3f}; "
          f"no finished straggler has a cause in {int(df.strag_dom.isna().sum())} jobs")
    print(f"stragglers with a majority cause: {df.strag_majority.mean():.3f}; Hound mixtures with one: "
          f"{df.hound_majority.mean():.3f}")


if __name__ == "__main__":
    main()
