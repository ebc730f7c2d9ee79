"""The Hound chain over one trace's jobs, Dagster-free: inputs frame in, tables out.

``profile_jobs`` runs the per-job function (``learners.profile_job``) over
every job (a process pool when ``workers > 1``); ``diagnose`` runs meta
learning per learner, the ensemble and the naming, and returns the
``hound_topics`` and ``hound_job_causes`` rows.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from stragglers.diagnosis.learners import (LEARNERS, job_matrix, multiplicity, profile_job, share_weighted,
                                           straggler_shares)
from stragglers.settings.diagnosis import HoundSettings
from stragglers.diagnosis.topics import Ensemble, TopicModel, ensemble, meta_learn
from stragglers.diagnosis.vocabulary import METRIC_COLUMNS, METRICS, WORDS, keywords, name_topic

PROFILE_COLUMNS = ["job_id", "learner", "metric", "weight", "n_tasks", "n_imputed"]


def _one(args):
    frame, settings = args
    return profile_job(frame, settings)


def profile_jobs(inputs: pd.DataFrame, settings: HoundSettings, log=None) -> pd.DataFrame:
    """Every job's causality profiles (job x learner x metric)."""
    groups = [g for _, g in inputs.groupby("job_id", sort=True)]
    if not groups:
        return pd.DataFrame(columns=PROFILE_COLUMNS)
    out = []
    if settings.workers > 1 and len(groups) > 1:
        with ProcessPoolExecutor(settings.workers) as pool:
            for i, df in enumerate(pool.map(_one, [(g, settings) for g in groups])):
                out.append(df)
                if log and (i + 1) % 10 == 0:
                    log(f"profiled {i + 1}/{len(groups)} jobs")
    else:
        for i, g in enumerate(groups):
            out.append(profile_job(g, settings))
            if log and (i + 1) % 10 == 0:
                log(f"profiled {i + 1}/{len(groups)} jobs")
    return pd.concat(out, ignore_index=True)


def share_weighted_profiles(profiles: pd.DataFrame, inputs: pd.DataFrame, settings: HoundSettings) -> pd.DataFrame:
    """Stored ``hound_profiles`` rows (strength weights) -> the rows ``profile_weights = "share"`` gives,
    without re-running the learners: ``share_weighted`` reads only a profile's signs, which rescaling
    keeps. ``inputs``: the same jobs' ``hound_inputs`` rows."""
    names = [METRICS[c] for c in METRIC_COLUMNS]
    out = []
    for job, g in inputs.groupby("job_id", sort=True):
        X, y, _ = job_matrix(g)
        shares, mult = straggler_shares(X, y, settings.straggler_quantile), multiplicity(X)
        p = profiles[profiles.job_id == job]
        for learner, q in p.groupby("learner", sort=False):
            q = q.set_index("metric").reindex(names)
            w = share_weighted(q.weight.fillna(0.0).to_numpy(), shares, mult)
            out.append(pd.DataFrame({"job_id": job, "learner": learner, "metric": names, "weight": w,
                                     "n_tasks": q.n_tasks.to_numpy(), "n_imputed": q.n_imputed.to_numpy()}))
    return pd.concat(out, ignore_index=True)[PROFILE_COLUMNS] if out else pd.DataFrame(columns=PROFILE_COLUMNS)


def profile_matrix(profiles: pd.DataFrame, learner: str, jobs: list) -> np.ndarray:
    names = [METRICS[c] for c in METRIC_COLUMNS]
    wide = (profiles[profiles.learner == learner].pivot(index="job_id", columns="metric", values="weight")
            .reindex(index=jobs, columns=names).fillna(0.0))
    return wide.to_numpy()


@dataclass
class Diagnosis:
    models: dict            # learner -> TopicModel
    ensemble: Ensemble
    topics: pd.DataFrame    # hound_topics rows (initial and ensemble topics)
    mixtures: pd.DataFrame  # hound_topic_mixtures rows (job x ensemble topic)
    job_causes: pd.DataFrame  # hound_job_causes rows


def topic_rows(models: dict[str, TopicModel], ens: Ensemble) -> pd.DataFrame:
    """Table 4: every ensemble topic E_i (keywords, weights, member topics, name) and every
    initial topic P_i/D_i/C_i with the ensemble topic it went into (or none: dropped)."""
    rows = []
    member_of = {m: f"E{e}" for e, mem in enumerate(ens.members) for m in mem}
    for e, topic in enumerate(ens.topics):
        kw = keywords(topic)
        rows.append({"topic": f"E{e}", "learner": "ENS", "keywords": ", ".join(w for w, _ in kw),
                     "weights": ", ".join(f"{v:.2f}" for _, v in kw),
                     "cluster": ", ".join(f"{l[0]}{q}" for l, q in ens.members[e]),
                     "cause": name_topic(topic), "coverage": float((ens.mixtures[:, e] > 0).mean())})
    for learner, m in models.items():
        for q, topic in enumerate(m.beta):
            kw = keywords(topic)
            rows.append({"topic": f"{learner[0]}{q}", "learner": learner, "keywords": ", ".join(w for w, _ in kw),
                         "weights": ", ".join(f"{v:.2f}" for _, v in kw),
                         "cluster": member_of.get((learner, q), "unclustered"),
                         "cause": name_topic(topic), "coverage": float((m.theta[:, q] > 0).mean())})
    df = pd.DataFrame(rows, columns=["topic", "learner", "keywords", "weights", "cluster", "cause", "coverage"])
    return df.astype({"cause": "string"})


def mixture_rows(ens: Ensemble) -> pd.DataFrame:
    """Each job's trimmed mixture over the ensemble topics (job_id, topic, weight > 0)."""
    rows = [{"job_id": job, "topic": f"E{e}", "weight": float(w)}
            for i, job in enumerate(ens.jobs) for e, w in enumerate(ens.mixtures[i]) if w > 0]
    return pd.DataFrame(rows, columns=["job_id", "topic", "weight"])


def job_cause_rows(mixtures: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """Table 5: each job's mixture of causes. Ensemble topics with the same name are summed; an
    unnamed topic stays as its (first three) keywords, named = false."""
    ens = topics[topics.learner == "ENS"].set_index("topic")
    m = mixtures.join(ens[["cause", "keywords"]], on="topic")
    named = m.cause.notna()
    m["label"] = m.cause.where(named, m.keywords.fillna("").map(lambda k: "+".join(k.split(", ")[:3])))
    m["named"] = named
    df = (m.groupby(["job_id", "label", "named"], sort=False)
          .agg(weight=("weight", "sum"), topics=("topic", ",".join)).reset_index()
          .rename(columns={"label": "cause"}))
    df = df.sort_values(["job_id", "weight"], ascending=[True, False], kind="stable").reset_index(drop=True)
    df["rank"] = df.groupby("job_id").cumcount() + 1
    return df[["job_id", "cause", "named", "weight", "topics", "rank"]]


def diagnose(profiles: pd.DataFrame, settings: HoundSettings) -> Diagnosis:
    """Algorithms 3 and 4 and the naming over every job's profiles."""
    jobs = sorted(profiles.job_id.unique().tolist())
    models = {}
    for i, learner in enumerate(LEARNERS):
        models[learner] = meta_learn(learner, jobs, profile_matrix(profiles, learner, jobs), words=settings.words,
                                     k_min=settings.k_min, coverage_stop=settings.coverage_stop, eta=settings.trim,
                                     seed=settings.seed + i)
    ens = ensemble(list(models.values()), eta=settings.trim, lam=settings.ensemble_lambda)
    topics, mixtures = topic_rows(models, ens), mixture_rows(ens)
    return Diagnosis(models, ens, topics, mixtures, job_cause_rows(mixtures, topics))


__all__ = ["Diagnosis", "diagnose", "profile_jobs", "WORDS"]
