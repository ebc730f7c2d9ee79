"""Wrangler (Yadwadkar et al., SoCC 2014) as the NURD paper runs it (docs/PROTOCOL.md section 5).

An oracle baseline by design: a linear SVM trained with the TRUE straggler
labels of a random 2/3 of the job's tasks, SMOTE-oversampling the stragglers,
and evaluated on the other third.

- Split: ``job.task_ids`` permuted with the job seed; the first
  round(2/3 n) are training tasks, the rest the test third
  (``scored_task_ids``). The split is not stratified by label: stratifying
  would need every task's label, test third included, and the method must
  never read a test-third label. (The paper samples "2/3 non-stragglers and
  stragglers", i.e. stratified; with ~10% stragglers the expected shares
  are the same.)
- At checkpoint t the training rows are the training tasks among finished
  and running, with their features as of t, labelled ``job.labels[id]``.
- SMOTE (imbalanced-learn, ``k_neighbors`` = 5, reduced to n_stragglers - 1
  when fewer stragglers are in the training rows, so small jobs still fit;
  ``CannotFit`` below 2 stragglers) then ``LinearSVC`` (scikit-learn
  defaults: C=1, squared hinge, max_iter 1000; a convergence warning does not
  make the linear classifier unusable and is ignored).
- ``flag`` flags test-third candidates the SVM predicts stragglers; training
  tasks are never flagged (they are not scored).
"""

from __future__ import annotations

import numpy as np

from stragglers.prediction.methods._common import cannot_fit_on_error, int_seed, job_rng, quiet
from stragglers.prediction.methods.base import DECISION_GRID, CannotFit, JobContext, Method, MethodTags, TaskSet


class Wrangler(Method):
    name = "wrangler"
    family = "wrangler"
    tags = MethodTags(reads_labels=True)
    notes = {"split": "random, not stratified, job seed", "smote_k_rule": "min(k, n_stragglers - 1)",
             "svm": "sklearn LinearSVC"}

    def __init__(self, train_fraction: float = 2.0 / 3.0, smote_k_neighbors: int = 5, svm_C: float = 1.0,
                 svm_max_iter: int = 1000) -> None:
        super().__init__()
        self.train_fraction, self.smote_k_neighbors = train_fraction, smote_k_neighbors
        self.svm_C, self.svm_max_iter = svm_C, svm_max_iter

    # -- split ----------------------------------------------------------------
    def split(self, job: JobContext) -> tuple[np.ndarray, np.ndarray]:
        """(training task ids, test task ids), deterministic in the job seed."""
        ids = np.asarray(job.task_ids, dtype=np.int64)
        perm = job_rng(job.seed, 31).permutation(len(ids))
        n_train = int(round(self.get_params()["train_fraction"] * len(ids)))
        return np.sort(ids[perm[:n_train]]), np.sort(ids[perm[n_train:]])

    def reset(self, job: JobContext) -> None:
        super().reset(job)
        self.train_ids_, self.test_ids_ = self.split(job)
        self.svm_ = None

    def scored_task_ids(self, job: JobContext) -> np.ndarray | None:
        return self.split(job)[1]

    # -- fit / flag ---------------------------------------------------------------
    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        from imblearn.over_sampling import SMOTE
        from sklearn.svm import LinearSVC

        self.svm_ = None
        if self.job.labels is None:
            raise CannotFit("wrangler: oracle labels not provided")
        rows = TaskSet(
            np.r_[finished.task_ids, running.task_ids],
            np.vstack([finished.X, running.X]),
        )
        rows = rows.take(np.isin(rows.task_ids, self.train_ids_))
        # only training-third labels are ever read
        y = np.array([bool(self.job.labels[int(i)]) for i in rows.task_ids], dtype=int)
        n_pos = int(y.sum())
        if n_pos < 2 or n_pos == len(y):
            raise CannotFit(f"wrangler: {n_pos} stragglers among {len(y)} training tasks (needs >= 2 and a non-straggler)")
        k = min(int(self.get_params()["smote_k_neighbors"]), n_pos - 1)
        seed = int_seed(self.job.seed)
        with cannot_fit_on_error("wrangler fit"), quiet():
            Xs, ys = SMOTE(k_neighbors=k, random_state=seed).fit_resample(rows.X, y)
            svm = LinearSVC(C=self.get_params()["svm_C"], max_iter=self.get_params()["svm_max_iter"], random_state=seed)
            svm.fit(Xs, ys)
        self.svm_ = svm
        self.k_used_ = k

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.svm_ is None:
            raise CannotFit("wrangler: not fitted")
        out = np.zeros(len(candidates), dtype=bool)
        test = np.isin(candidates.task_ids, self.test_ids_)
        if test.any():
            with cannot_fit_on_error("wrangler score"), quiet():
                out[test] = self.svm_.predict(candidates.X[test]) == 1
        return {self.name: out}

    # LinearSVC.predict is decision_function > 0
    sweep_grid, sweep_strict = DECISION_GRID, True

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        # the SVM's decision value on the test third (the other tasks: none)
        if self.svm_ is None:
            return {}
        d = np.full(len(candidates), -np.inf)
        test = np.isin(candidates.task_ids, self.test_ids_)
        if test.any():
            with cannot_fit_on_error("wrangler score"), quiet():
                d[test] = self.svm_.decision_function(candidates.X[test])
        return {self.name: d}
