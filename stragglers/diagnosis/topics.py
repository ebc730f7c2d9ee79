"""Hound's meta learning (Algorithm 3, LDA over causality profiles) and ensemble
learning (Algorithm 4, HAC over the learners' topics)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist, squareform
from sklearn.decomposition import LatentDirichletAllocation

from stragglers.diagnosis.vocabulary import words_of


def trim(weights: np.ndarray, eta: float) -> np.ndarray:
    """Algorithm 3 step 2 / Algorithm 4 Phase II: drop entries below eta and rescale each row to sum one.
    A row whose entries are all below eta keeps its largest one; an all-zero row stays zero."""
    w = np.atleast_2d(np.asarray(weights, dtype=float)).copy()
    for row in w:
        total = row.sum()
        if total <= 0:
            continue
        row /= total
        keep = row >= eta
        if not keep.any():
            keep = row == row.max()
        row[~keep] = 0.0
        row /= row.sum()
    return w


@dataclass
class TopicModel:
    """One learner's initial causal topics: beta (k x words), theta (jobs x k) for the jobs in ``jobs``."""

    learner: str
    beta: np.ndarray
    theta: np.ndarray
    jobs: list
    k_tried: list = field(default_factory=list)
    coverage: np.ndarray | None = None


def documents(profiles: np.ndarray, words: int, seed: int) -> np.ndarray:
    """Algorithm 3 step 2: each job's profile -> a discrete distribution R_i over the words
    (K(+), K(-)) -> W words drawn from it (counts per word). Empty profiles give empty documents."""
    rng = np.random.default_rng(seed)
    docs = np.zeros((len(profiles), 2 * profiles.shape[1]), dtype=np.int64)
    for i, p in enumerate(profiles):
        r = words_of(p)
        if r.sum() > 0:
            docs[i] = rng.multinomial(words, r / r.sum())
    return docs


def meta_learn(learner: str, jobs: list, profiles: np.ndarray, *, words: int = 500, k_min: int = 5,
               coverage_stop: float = 0.05, eta: float = 0.1, seed: int = 0, k_max: int | None = None) -> TopicModel:
    """Algorithm 3: for k = k_min, k_min + 1, ...: LDA with k topics on the documents; trim topics and
    mixtures at eta and rescale; stop when some topic's document coverage (share of jobs whose trimmed
    mixture holds it) is below epsilon, and output that k's topics ("output current beta, theta").
    k stops at k_max (default: the number of non-empty documents or of words, whichever is smaller).
    Jobs with an empty profile (the learner found nothing) get an all-zero mixture."""
    docs = documents(np.asarray(profiles, float), words, seed)
    nonempty = docs.sum(axis=1) > 0
    n_docs = int(nonempty.sum())
    if n_docs == 0:
        return TopicModel(learner, np.zeros((0, docs.shape[1])), np.zeros((len(jobs), 0)), list(jobs))
    k_max = k_max or min(n_docs, docs.shape[1])
    k = min(k_min, k_max)
    tried = []
    while True:
        lda = LatentDirichletAllocation(n_components=k, learning_method="batch", max_iter=100,
                                        random_state=seed).fit(docs[nonempty])
        beta = trim(lda.components_, eta)
        theta = np.zeros((len(jobs), k))
        theta[nonempty] = trim(lda.transform(docs[nonempty]), eta)
        coverage = (theta[nonempty] > 0).mean(axis=0)
        tried.append(k)
        if (coverage < coverage_stop).any() or k >= k_max:
            return TopicModel(learner, beta, theta, list(jobs), tried, coverage)
        k += 1


def cosine_similarity_matrix(vectors: np.ndarray) -> np.ndarray:
    return 1.0 - squareform(pdist(vectors, metric="cosine"))


def cluster_score(sim: np.ndarray, labels: np.ndarray, lam: float) -> float:
    """Algorithm 4: SCORE = lambda H1 + (1 - lambda)(1 - H2) with cosine similarity.
    H1, the average intra-cluster similarity, is taken per topic: the mean similarity of a topic to
    the other members of its cluster, averaged over all topics, a singleton counting 0 (it has no
    support; without this, splitting everything into singletons would always score best). H2 is the
    mean similarity over pairs of topics in different clusters (0 when there is one cluster)."""
    n = len(labels)
    same = labels[:, None] == labels[None, :]
    np.fill_diagonal(same, False)
    mates = same.sum(axis=1)
    per_topic = np.where(mates > 0, (sim * same).sum(axis=1) / np.maximum(mates, 1), 0.0)
    h1 = float(per_topic.mean()) if n else 0.0
    other = labels[:, None] != labels[None, :]
    h2 = float(sim[other].mean()) if other.any() else 0.0
    return float(lam * h1 + (1 - lam) * (1 - h2))


@dataclass
class Ensemble:
    """Ensemble topics (rows of ``topics``), their member initial topics, and each job's mixture."""

    topics: np.ndarray                 # L x words, trimmed
    members: list                      # per ensemble topic: [(learner, topic index), ...]
    dropped: list                      # clusters made by one learner: [(learner, topic index), ...]
    mixtures: np.ndarray               # jobs x L, trimmed, rows sum to 1 (or all zero)
    jobs: list
    n_clusters: int = 0
    scores: dict = field(default_factory=dict)


def ensemble(models: list[TopicModel], *, eta: float = 0.1, lam: float = 2 / 3,
             m_range: tuple[int, int] | None = None) -> Ensemble:
    """Algorithm 4. Phase I: HAC (average linkage on cosine distance; the paper names no linkage) over
    all initial topics for every m in [m1, m2] (default [max topics of one learner, all topics - 1]),
    keep the m with the best SCORE; a cluster whose topics all come from one learner is dropped,
    the others' centroids (mean of members, trimmed at eta) are the causal topics. Phase II: each
    learner's job mixture is carried to the causal topics (a dropped topic's weight is lost), the
    three are averaged (PE_n = 1/3 (PPE_n + PDE_n + PCE_n)), trimmed at eta and rescaled."""
    jobs = models[0].jobs
    for m in models:
        if m.jobs != jobs:
            raise ValueError("every learner's topic model must cover the same jobs in the same order")
    n_words = max((m.beta.shape[1] for m in models if m.beta.ndim == 2), default=0)
    vecs = np.vstack([m.beta for m in models if len(m.beta)]) if any(len(m.beta) for m in models) \
        else np.zeros((0, n_words))
    origin = [(m.learner, q) for m in models for q in range(len(m.beta))]
    t = len(origin)
    if t < 2:   # nothing two learners could agree on
        return Ensemble(np.zeros((0, n_words)), [], origin, np.zeros((len(jobs), 0)), jobs)
    sim = cosine_similarity_matrix(vecs)
    tree = linkage(vecs, method="average", metric="cosine")
    m1, m2 = m_range or (max(2, max(len(m.beta) for m in models)), t - 1)
    m1, m2 = min(m1, t - 1), max(min(m2, t - 1), 1)
    scores, best = {}, None
    for m in range(m1, m2 + 1):
        labels = fcluster(tree, t=m, criterion="maxclust")
        scores[m] = cluster_score(sim, labels, lam)
        if best is None or scores[m] > scores[best[0]]:
            best = (m, labels)
    m_best, labels = best
    topics, members, dropped = [], [], []
    for lab in sorted(set(labels)):
        idx = [i for i in range(t) if labels[i] == lab]
        learners = {origin[i][0] for i in idx}
        if len(idx) < 2 or len(learners) < 2:
            dropped += [origin[i] for i in idx]
            continue
        topics.append(trim(vecs[idx].mean(axis=0), eta)[0])
        members.append([origin[i] for i in idx])
    topics = np.array(topics).reshape(len(topics), vecs.shape[1])
    per_learner = []
    for m in models:
        mix = np.zeros((len(jobs), len(topics)))
        for e, mem in enumerate(members):
            for learner, q in mem:
                if learner == m.learner:
                    mix[:, e] += m.theta[:, q]
        per_learner.append(mix)
    mixtures = trim(np.mean(per_learner, axis=0), eta) if len(topics) else np.zeros((len(jobs), 0))
    return Ensemble(topics, members, dropped, mixtures, jobs, m_best, scores)
