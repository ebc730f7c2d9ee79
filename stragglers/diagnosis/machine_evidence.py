"""Node evidence for limited processor beside Hound: the answer ``hound_with_nodes``.

Measured beside Hound (docs/HOUND.md, "node evidence for limited processor"; by
``studies/hound/hound_nodes.py``). Limited processor is a property of the machine. A job's own tasks
show it weakly; the other jobs' tasks on the same machine show it too. Ouyang et al. (SCC 2016)
z-normalize every finished task's duration within its job (Eq. 1) and describe a machine by the
mean z of its tasks (Table 1, "mean"). The warehouse holds those rows in ``node_task_durations``
(built by the node ranking); this module reads them as plain data and imports nothing of
``stragglers.nodes`` (tests/test_architecture.py).

The rule decided on dev traces 7 and 13 (``t05``, majority):

- a job's stragglers are its tasks with latency above the job's quantile (0.9) over ``hound_inputs``;
- a straggler is on a slow machine when the *other* jobs' tasks on its machine (leave the job out)
  number at least ``min_tasks`` and their mean z is above 0 by a one-sided Student-t test at 0.05
  (``slow_machines``). Zero is the mean z of every job's tasks, so "above 0" means slower than
  their siblings on average. Unknown machines and machines with fewer tasks are not slow;
- the job's node share is the share of its stragglers on slow machines (``node_shares``);
- the answer is limited processor alone where the node share is above 1/2 (Hound's own "dominant",
  Section 5.1: the cause of the majority of the stragglers) and Hound's mixture elsewhere
  (``with_nodes``). Hound's own answer is not changed.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats

from stragglers.settings.diagnosis import HoundSettings
from stragglers.diagnosis.truth import STRAGGLER_QUANTILE, diagnosed_mixtures
from stragglers.traces.synth.model import LIMITED_PROCESSOR

METHOD = "hound_with_nodes"   # the answer's name in hound_validation's summary
LEVEL = 0.05                  # the one-sided t-test's level (``t05``)
MAJORITY = 0.5                # a node share above this answers limited processor alone
DURATION_COLUMNS = ["job_id", "task_id", "machine_id", "z"]   # what is read of node_task_durations

# judge(stragglers, threshold, others) -> per straggler, whether its machine explains it: ``stragglers``
# are one job's stragglers (index job_id, task_id; latency_s and the columns of its node_task_durations
# rows), ``threshold`` the job's straggler latency, ``others`` the other jobs' node_task_durations rows
Judge = Callable[[pd.DataFrame, float, pd.DataFrame], np.ndarray]


def machine_z(others: pd.DataFrame) -> pd.DataFrame:
    """Per machine, over ``others`` (node_task_durations rows of the other jobs): the number of tasks
    ``n``, the mean and the sample sd of their z (Ouyang et al., Eq. 1; Table 1's mean)."""
    g = others.groupby("machine_id").z
    return pd.DataFrame({"n": g.size(), "mean": g.mean(), "sd": g.std(ddof=1)})


def slow_machines(z_stats: pd.DataFrame, min_tasks: int, level: float = LEVEL) -> pd.Series:
    """Per machine with at least ``min_tasks`` tasks (``machine_z``): whether its mean z is above 0 by a
    one-sided Student-t test at ``level`` (``t05``). Machines with fewer tasks are left out (not slow)."""
    st = z_stats[z_stats.n >= min_tasks]
    se = st.sd / np.sqrt(st.n)
    return (st["mean"] - stats.t.ppf(1 - level, st.n - 1) * se > 0).rename("slow")


def t05(min_tasks: int) -> Judge:
    """The decided judge: a straggler is on a slow machine (``slow_machines`` of the other jobs' tasks)."""
    def judge(stragglers: pd.DataFrame, threshold: float, others: pd.DataFrame) -> np.ndarray:
        slow = slow_machines(machine_z(others), min_tasks)
        return stragglers.machine_id.map(slow).eq(True).to_numpy()   # unknown or unjudged: not slow
    return judge


def node_shares(inputs: pd.DataFrame, durations: pd.DataFrame, min_tasks: int,
                quantile: float = STRAGGLER_QUANTILE, judge: Judge | None = None) -> pd.DataFrame:
    """Per job of ``inputs`` (hound_inputs rows: job_id, task_id, latency_s): its stragglers (latency
    above the job's ``quantile``), how many have a machine in ``durations`` (node_task_durations rows:
    job_id, task_id, machine_id, z; other columns are passed to ``judge``), how many are on a slow
    machine judged from the other jobs' tasks only (``judge``, default ``t05(min_tasks)``), and the
    node share (0 for a job without stragglers). Index job_id."""
    judge = judge or t05(min_tasks)
    known = durations.set_index(["job_id", "task_id"]).drop(columns=["trace"], errors="ignore")
    rows = []
    for job, g in inputs.groupby("job_id"):
        threshold = g.latency_s.quantile(quantile)
        s = g[g.latency_s > threshold]
        s = s[["latency_s"]].set_index(pd.MultiIndex.from_arrays([s.job_id, s.task_id])).join(known)
        on = judge(s, threshold, durations[durations.job_id != job]) if len(s) else np.zeros(0, dtype=bool)
        rows.append({"job_id": job, "stragglers": len(s), "known": int(s.machine_id.notna().sum()),
                     "on_slow": int(on.sum()), "node_share": float(on.mean()) if len(s) else 0.0})
    return pd.DataFrame(rows, columns=["job_id", "stragglers", "known", "on_slow", "node_share"]).set_index("job_id")


def with_nodes(job_causes: pd.DataFrame, share: pd.Series, jobs: list) -> pd.DataFrame:
    """The majority rule: per job of ``jobs``, limited processor alone (weight 1) where its node share
    (``share``, by job_id; missing = 0) is above 1/2, Hound's mixture (``job_causes``: job_id, cause,
    weight) elsewhere. Rows job_id, cause, weight, as hound_job_causes."""
    rows = []
    for j, mix in diagnosed_mixtures(job_causes, jobs).items():
        mix = {LIMITED_PROCESSOR: 1.0} if float(share.get(j, 0.0)) > MAJORITY else mix
        rows += [{"job_id": j, "cause": c, "weight": w} for c, w in mix.items()]
    return pd.DataFrame(rows, columns=["job_id", "cause", "weight"])


def hound_with_nodes(job_causes: pd.DataFrame, inputs: pd.DataFrame, durations: pd.DataFrame, jobs: list,
                     settings: HoundSettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``hound_with_nodes`` for ``jobs``: (the answer, rows as hound_job_causes; the node shares,
    ``node_shares``) with ``settings.node_min_tasks`` tasks of other jobs per judged machine and a
    straggler's latency above ``settings.straggler_quantile``."""
    shares = node_shares(inputs[inputs.job_id.isin(jobs)], durations[DURATION_COLUMNS], settings.node_min_tasks,
                         settings.straggler_quantile)
    return with_nodes(job_causes, shares.node_share, jobs), shares
