"""Does node evidence for limited processor let Hound beat the best constant?

Limited processor (LP) is a property of the machine (the truth's r = machine slowdown / typical).
A job's own tasks show it only weakly (about 0.5 sd of CPU(-)/CPI(+), docs/HOUND.md), but the
machine's tasks of *other* jobs show it too: Ouyang et al.'s node-level stragglers
(``stragglers/nodes``, table ``node_task_durations``: every finished task's duration z-normalized
within its job, Eq. 1, with its machine).

For each job Hound diagnoses and each of its stragglers (latency above the job's p90 over the tasks
Hound sees, ``hound_inputs``: the truth's definition), the straggler's machine is judged from the
other jobs' tasks on it only (leave one job out). The job's node share is the share of its
stragglers whose machine is judged slow (``straggler_on_slow``). Estimators (``--estimators``):

- ``t05`` (the one decided on dev traces 7 and 13): the mean z of the other jobs' tasks on the
  machine (Ouyang's Table 1 mean) is above 0, the mean z of any job's tasks, by a one-sided
  Student-t test at 0.05;
- ``ci95``: its 95 % CI (``NodeSettings.confidence``, the interval P-cores ranks on) lies above 0;
- ``level0``: P-cores level 0 among the machines ranked without the job;
- ``counterfactual``: the machine's slowdown r estimated from the other jobs' tasks (median of
  log(duration / its job's median duration)), and the straggler would not straggle without it;
- ``oracle``, a bound that reads the truth: the machine is slower than the typical one;
  ``oracle_counterfactual``: ``counterfactual`` with the machine's true slowdown.

Machines with fewer than ``node_min_tasks`` (10) tasks of other jobs are not judged slow.

``t05``, the majority rule and the node share are the pipeline's (``stragglers/diagnosis/machine_evidence.py``,
the answer ``hound_with_nodes`` of ``hound_validation``); the other estimators live here only.

Answers scored (dominant-cause accuracy against the stragglers truth, ``truth.validate``, which also
gives "always data skew" and the best constant in hindsight):

- ``Hound``: Hound's mixture (``run.diagnose(...).job_causes``), LDA seeds 0-4;
- ``Hound + nodes`` (``--rules``): ``majority`` (decided on dev) answers LP where the node share is
  above 1/2 (Hound's own "dominant": the cause of the majority of the stragglers, Section 5.1) and
  Hound's mixture elsewhere; ``replace`` sets Hound's LP weight to the node share;
- ``nodes alone``: LP where the node share is above 1/2, else data skew (the baseline's answer).

    python -m studies.hound.hound_nodes --data-dir /work/scratch/i28c/seed7 [--data-dir ...]
        [--estimators t05,ci95,level0,counterfactual] [--rules majority,replace]

Each data directory needs ``*hound_profiles`` and ``*node_ranking`` materialized with
``synthetic_seed`` set in the run config (``resources: {nurd: {config: {synthetic_seed: N}}}``).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
from scipy import stats

from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.machine_evidence import machine_z, t05, with_nodes
from stragglers.diagnosis.machine_evidence import node_shares as machine_node_shares
from stragglers.diagnosis.run import diagnose
from stragglers.diagnosis.truth import (BASELINE_CAUSE, BEST_CONSTANT, PRIMARY_TRUTH, STRAGGLER_QUANTILE,
                                       cause_added_s, diagnosed_mixtures, dominant, recall_by_cause,
                                       straggler_mixtures, validate)
from stragglers.nodes.ranking import pcores_levels
from stragglers.settings.nodes import NodeSettings
from stragglers.traces.synth import model as M

from studies.hound.hound_seeds import read_run

LP = M.LIMITED_PROCESSOR


def node_durations(data_dir: str) -> pd.DataFrame:
    with duckdb.connect(str(Path(data_dir) / "warehouse.duckdb"), read_only=True) as con:
        return con.execute("SELECT job_id, task_id, machine_id, duration_s, z FROM node_task_durations "
                           "WHERE trace = 'synthetic'").df()


ESTIMATORS = ("t05", "ci95", "level0", "counterfactual", "oracle", "oracle_counterfactual")


def machine_stats(others: pd.DataFrame) -> pd.DataFrame:
    """Per machine, over the other jobs' tasks on it: n, mean and sd of z (Eq. 1, ``machine_evidence.machine_z``),
    and the median of log(duration / median duration of the task's job)."""
    return machine_z(others).assign(log_ratio=others.groupby("machine_id").log_ratio.median())


def straggler_on_slow(stragglers: pd.DataFrame, p90: float, others: pd.DataFrame, settings: NodeSettings,
                      estimator: str) -> np.ndarray:
    """Per straggler (columns machine_id, latency_s, duration_s): whether its machine, judged from the other
    jobs' tasks only (``others``, node_task_durations rows with log_ratio), explains it.

    - t05 (the pipeline's, ``machine_evidence.t05``): one-sided t-test of mean z > 0 at 0.05;
    - ci95: the 95 % Student-t CI of the mean z lies above 0 (``node_indicators.ci_lo`` > 0: P-cores'
      "certainly slower" against a typical node at 0);
    - level0: P-cores level 0 among the machines ranked without the job (``ranking.pcores_levels``);
    - counterfactual: r = exp(median log ratio), at least 1, and the straggler would not straggle on a
      typical machine: latency - duration (1 - 1/r) <= p90 (the truth's counterfactual, r estimated);
    - oracle (a bound, reads the truth): the straggler's machine is slower than the typical machine
      (``stragglers.machine_slowdown`` > ``TYPICAL_SLOWDOWN``);
    - oracle_counterfactual (a bound, reads the truth): counterfactual with the machine's true r.

    Machines with fewer than ``min_tasks_per_node`` such tasks (unranked) and unknown machines: not slow."""
    if estimator == "t05":
        return t05(settings.min_tasks_per_node)(stragglers, p90, others)
    if estimator == "oracle":
        return (stragglers.machine_slowdown > M.TYPICAL_SLOWDOWN).to_numpy()
    if estimator == "oracle_counterfactual":
        r = (stragglers.machine_slowdown / M.TYPICAL_SLOWDOWN).clip(lower=1.0)
        return (stragglers.latency_s - stragglers.duration_s.fillna(0.0) * (1 - 1 / r) <= p90).to_numpy()
    st = machine_stats(others)
    st = st[st.n >= settings.min_tasks_per_node]
    se = st.sd / np.sqrt(st.n)
    if estimator == "ci95":
        slow = st["mean"] - stats.t.ppf(1 - (1 - settings.confidence) / 2, st.n - 1) * se > 0
    elif estimator == "level0":
        half = stats.t.ppf(1 - (1 - settings.confidence) / 2, st.n - 1) * se
        slow = pd.Series(pcores_levels((st["mean"] - half).to_numpy(), (st["mean"] + half).to_numpy()) == 0,
                         index=st.index)
    elif estimator == "counterfactual":
        r = np.exp(stragglers.machine_id.map(st.log_ratio)).fillna(1.0).clip(lower=1.0)
        return (stragglers.latency_s - stragglers.duration_s.fillna(0.0) * (1 - 1 / r) <= p90).to_numpy()
    else:
        raise ValueError(estimator)
    return stragglers.machine_id.map(slow).fillna(False).astype(bool).to_numpy()


def node_shares(inputs: pd.DataFrame, durations: pd.DataFrame, settings: NodeSettings,
                estimator: str = "t05", truth_tasks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per job: its stragglers (latency > the job's p90 over ``inputs``), how many have a machine in
    ``node_task_durations``, and the share whose machine, judged without the job, explains them
    (``machine_evidence.node_shares`` with this benchmark's estimators)."""
    durations = durations.assign(log_ratio=np.log(durations.duration_s / durations.groupby("job_id")
                                                  .duration_s.transform("median")))
    if estimator.startswith("oracle"):
        durations = durations.merge(truth_tasks.rename(columns={"task_index": "task_id"})
                                    [["job_id", "task_id", "machine_slowdown"]], on=["job_id", "task_id"], how="left")
    return machine_node_shares(inputs, durations, settings.min_tasks_per_node, STRAGGLER_QUANTILE,
                               lambda s, p90, others: straggler_on_slow(s, p90, others, settings, estimator))


def combined(job_causes: pd.DataFrame, share: pd.Series, jobs: list, rule: str) -> pd.DataFrame:
    """Hound's per-job mixture with the node share: ``replace`` sets the LP weight to it (0: no LP);
    ``majority`` (``machine_evidence.with_nodes``, the pipeline's ``hound_with_nodes``) answers LP alone where
    the share is above 1/2 and keeps Hound's mixture elsewhere."""
    if rule == "majority":
        return with_nodes(job_causes, share, jobs)
    if rule != "replace":
        raise ValueError(rule)
    rows = []
    for j, mix in diagnosed_mixtures(job_causes, jobs).items():
        sh = float(share.get(j, 0.0))
        mix = {c: w for c, w in mix.items() if c != LP} | ({LP: sh} if sh > 0 else {})
        rows += [{"job_id": j, "cause": c, "weight": w} for c, w in mix.items()]
    return pd.DataFrame(rows, columns=["job_id", "cause", "weight"])


def nodes_alone(share: pd.Series, jobs: list) -> pd.DataFrame:
    return pd.DataFrame({"job_id": jobs, "cause": [LP if share.get(j, 0.0) > 0.5 else BASELINE_CAUSE for j in jobs],
                         "weight": 1.0})


def score(job_causes, truth_jobs, jobs, mix):
    """(dominant-cause accuracy of the answer, of always data skew, the best constant row, (LP hits, LP-dominant
    jobs, jobs answered LP)) against the stragglers truth."""
    per_job, s = validate(job_causes, truth_jobs, jobs, mix)
    s = s[s.truth == PRIMARY_TRUTH].set_index("method")
    r = recall_by_cause(per_job)
    r = r[(r.truth == PRIMARY_TRUTH) & (r.cause == LP)]
    lp = (int(r.hound_hits.iloc[0]), int(r.jobs.iloc[0]), int(r.answered.iloc[0])) if len(r) else (0, 0, 0)
    return (s.loc["hound"].dominant_accuracy, s.loc[f"always_{BASELINE_CAUSE}"].dominant_accuracy,
            s.loc[BEST_CONSTANT], lp)


def share_note(shares: pd.DataFrame, mix: dict, lp_jobs, other) -> str:
    """How many stragglers have a machine in node_task_durations, and the median node share in the
    LP-dominant jobs (beside their truth's LP share) and in the others."""
    lp_share = pd.Series({j: mix[j].get(LP, 0.0) for j in lp_jobs}).median()
    share = shares.node_share
    return (f"{int(shares.stragglers.sum())} stragglers in {len(shares)} jobs, {int(shares.known.sum())} with a "
            f"machine in node_task_durations; median node share {share.reindex(lp_jobs).median():.2f} in the "
            f"{len(lp_jobs)} LP-dominant jobs (their truth's LP share {lp_share:.2f}), "
            f"{share.reindex(other).median():.2f} in the {len(other)} others")


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.hound.hound_nodes")
    ap.add_argument("--data-dir", action="append", required=True)
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--estimators", default="t05", help=f"comma list of {ESTIMATORS}")
    ap.add_argument("--rules", default="majority", help="comma list of replace, majority")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    ns = NodeSettings()
    seeds = [int(s) for s in args.seeds.split(",")]
    f = lambda xs: ", ".join(f"{x:.3f}" for x in xs)
    print("| trace | jobs | always data skew | best constant in hindsight | answer | accuracy, LDA seeds | "
          "LP hits (of LP-dominant jobs) | jobs answered LP |")
    print("|---|---|---|---|---|---|---|---|")
    notes = []
    for d in args.data_dir:
        name = Path(d).name
        profiles, inputs, tj, tt = read_run(d)
        durations = node_durations(d)
        mix = straggler_mixtures(cause_added_s(tt, tj, inputs))
        jobs = sorted(profiles.job_id.unique())
        causes = [diagnose(profiles, HoundSettings(seed=seed)).job_causes for seed in seeds]
        res = [score(jc, tj, jobs, mix) for jc in causes]
        base, best, n_lp = res[0][1], res[0][2], res[0][3][1]
        head = f"| {name} | {int(best.jobs)} | {base:.3f} | {best.dominant_accuracy:.3f} ({best.answers}) |"

        def row(label, rs):
            print(f"{head} {label} | {f(r[0] for r in rs)} | {', '.join(str(r[3][0]) for r in rs)} of {n_lp} | "
                  f"{', '.join(str(r[3][2]) for r in rs)} |", flush=True)
        row("Hound", res)
        truth_dom = pd.Series({j: dominant(mix.get(j, {})) for j in jobs})
        lp_jobs = truth_dom[truth_dom == LP].index
        other = truth_dom[truth_dom.notna() & (truth_dom != LP)].index
        for est in args.estimators.split(","):
            shares = node_shares(inputs[inputs.job_id.isin(jobs)], durations, ns, est, tt)
            share = shares.node_share
            for rule in args.rules.split(","):
                row(f"Hound + nodes ({est}, {rule})", [score(combined(jc, share, jobs, rule), tj, jobs, mix)
                                                       for jc in causes])
            row(f"nodes alone ({est})", [score(nodes_alone(share, jobs), tj, jobs, mix)])
            notes.append(f"- {name}, {est}: {share_note(shares, mix, lp_jobs, other)}")
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
