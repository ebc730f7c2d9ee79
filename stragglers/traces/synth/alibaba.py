"""Synthetic batch_instance table in the layout of Alibaba cluster-trace-v2018.

A NURD "job" here is a task (job_name, task_name) with >= 100 instances; an
instance plays the task. The same cause model as the Google generator
(model.py), seen through the four static summaries the table has.
See docs/SYNTHETIC_TRACE.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import model as M
from .formats import file_sizes, published_dir, write_tar_gz
from .google_truth import _write_truth

TRACE_SPAN_S = 8 * 86400            # 8 days (docs/TRACES.md)
TASK_START_S = (1_000, 600_000)     # INVENTED: task start times, uniform
MEDIAN_RUN_S = (60, 1200)           # INVENTED: per-task median instance run time
INSTANCES_LOGNORMAL = (250.0, 0.7)  # INVENTED: instances per big task
N_MACHINES = 4034                   # v2018 has ~4K machines (m_1 .. m_4034)
N_SPECIAL = 3                       # boundary_min, boundary_below, unfinished


def _lu(rng, a, b):
    return float(np.exp(rng.uniform(np.log(a), np.log(b))))


def _fmt(x) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.2f}"
    return str(x)


def generate_alibaba_2018(
    out_dir: Path,
    *,
    seed: int = 2018,
    n_jobs: int = 48,
    min_instances: int = 100,
    max_instances: int = 2000,
    max_small_tasks: int = 3,
    truth_dir: Path | None = None,
) -> M.GenerationSummary:
    """Write out_dir/batch_instance.tar.gz (one member batch_instance.csv, no
    header) and out_dir/SHA256SUM. n_jobs is the number of job_names; each
    has one big task (>= min_instances instances, except the boundary cases)
    and 0..max_small_tasks small ones (< min_instances)."""
    out_dir = Path(out_dir)
    if truth_dir is not None:
        truth_dir = Path(truth_dir)
        if truth_dir.resolve().is_relative_to(out_dir.resolve()):
            raise ValueError("truth_dir must not be inside the trace directory")
    if n_jobs < N_SPECIAL + 1:
        raise ValueError(f"n_jobs must be >= {N_SPECIAL + 1}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2018]))
    mslow = M.machine_slowdowns(rng, N_MACHINES)
    slow_pool = np.argsort(-mslow)[: N_MACHINES // 5]

    job_numbers = 1 + rng.choice(1_500_000, size=n_jobs, replace=False)
    kinds = ["regular"] * (n_jobs - N_SPECIAL) + ["boundary_min", "boundary_below", "unfinished"]
    kinds = [kinds[i] for i in rng.permutation(n_jobs)]
    ins_iter = _instance_numbers(rng)

    rows: list[tuple] = []
    jrows, trows = [], []
    for jn, kind in zip(job_numbers.tolist(), kinds):
        job_name = f"j_{jn}"
        n_small = int(rng.integers(0, max_small_tasks + 1))
        n_tasks = 1 + n_small
        big_pos = int(rng.integers(n_tasks))
        names = _task_names(rng, n_tasks)
        for pos, task_name in enumerate(names):
            if pos == big_pos:
                if kind == "boundary_min":
                    n_inst = min_instances
                elif kind == "boundary_below":
                    n_inst = min_instances - 1
                else:
                    med, sig = INSTANCES_LOGNORMAL
                    n_inst = int(min(max(round(rng.lognormal(np.log(med), sig)), min_instances),
                                     max_instances))
                tkind = kind
            else:
                n_inst = int(rng.integers(1, min(60, min_instances - 1) + 1))
                tkind = "small"
            causes = M.draw_job_causes(rng)
            _one_task(rng, job_name, task_name, tkind, n_inst, causes, mslow, slow_pool,
                      ins_iter, rows, jrows, trows, min_instances)

    rows.sort(key=lambda r: (r[5] is None, r[5] if r[5] is not None else 0, r[2], r[1], r[0], r[8]))
    text = "".join(",".join(_fmt(x) for x in r) + "\n" for r in rows)

    with published_dir(out_dir) as stage:
        write_tar_gz(stage / "batch_instance.tar.gz", "batch_instance.csv", text.encode())
    files = file_sizes(out_dir)

    tj = pd.DataFrame(jrows).sort_values(["job_name", "task_name"]).reset_index(drop=True)
    tt = pd.DataFrame(trows)
    tt["latency_s"] = tt["latency_s"].astype("Int64")
    tt = tt.sort_values(["job_name", "task_name", "instance_name"]).reset_index(drop=True)
    counts = dict(
        job_names=n_jobs, tasks=len(tj), selected_tasks=int(tj.should_select.sum()),
        instances=len(tt), selected_instances=int(
            tt.set_index(["job_name", "task_name"]).index.isin(
                tj[tj.should_select].set_index(["job_name", "task_name"]).index).sum()),
        rows=len(rows), csv_bytes=len(text),
    )
    params = dict(seed=seed, n_jobs=n_jobs, min_instances=min_instances,
                  max_instances=max_instances, max_small_tasks=max_small_tasks)
    summary = M.GenerationSummary("alibaba_2018", out_dir, seed, M.GENERATOR_VERSION, params,
                                  files, counts, tj, tt)
    if truth_dir is not None:
        _write_truth(truth_dir, summary)
    return summary


def _instance_numbers(rng):
    """Distinct instance numbers (ins_74901673 style), increasing by random steps."""
    x = int(rng.integers(1_000_000, 5_000_000))
    while True:
        x += int(rng.integers(1, 400))
        yield x


def _task_names(rng, n: int) -> list[str]:
    """DAG-style task names like the real trace: M1, R2_1, J3_1_2 ..."""
    names = []
    for k in range(1, n + 1):
        if k == 1:
            names.append(f"M{k}")
        elif k == 2 or rng.random() < 0.5:
            names.append(f"R{k}_{k - 1}")
        else:
            names.append(f"J{k}_{k - 2}_{k - 1}")
    return names


def _one_task(rng, job_name, task_name, kind, n_inst, causes, mslow, slow_pool, ins_iter,
              rows, jrows, trows, min_instances):
    task_type = int(rng.integers(1, 13))
    t_start = int(rng.uniform(*TASK_START_S))
    median = _lu(rng, *MEDIAN_RUN_S)
    sigma = float(rng.uniform(*M.NOISE_SIGMA_RANGE))
    cpu0 = _lu(rng, 20, 200)           # 1/100 core
    mem0 = _lu(rng, 0.05, 3.0)         # percent of machine memory
    peak_cpu = float(rng.uniform(1.1, 2.5))
    failure_prone = kind not in ("boundary_min", "boundary_below") and rng.random() < M.FAILURE_PRONE_JOB_P
    retries_ok = kind not in ("boundary_min", "boundary_below")
    labels, sev = M.assign_task_causes(rng, n_inst, causes)
    n_term = 0
    for i in range(n_inst):
        ins = f"ins_{next(ins_iter)}"
        eff = M.cause_effect(labels[i], float(sev[i]), rng)
        het = rng.lognormal(0.0, M.TASK_USAGE_SIGMA, size=2)
        work = median * float(rng.lognormal(0.0, sigma)) * eff.latency
        now = t_start + int(rng.exponential(20.0) + eff.queue_gap_s)
        attempts = []   # (status, start, end, machine, cpu_avg, cpu_max, mem_avg, mem_max)
        failures = interrupts = 0
        budget = M.retry_budget(rng)
        final = None
        # statuses of instances that never ran to an end (special task + rare)
        r = rng.random()
        if kind == "unfinished" and r < 0.15:
            final = str(rng.choice(["Running", "Waiting", "Ready", "Cancelled"], p=[0.5, 0.2, 0.15, 0.15]))
        elif kind != "boundary_min" and kind != "boundary_below" and r < M.KILL_TASK_P:
            final = "Cancelled"
        n_evict = (1 if eff.evict else 0) if retries_ok else 0
        while True:
            m = int(slow_pool[rng.integers(len(slow_pool))]) if labels[i] == M.LIMITED_PROCESSOR \
                else int(rng.integers(N_MACHINES))
            run = work * mslow[m]
            wait = eff.slow_start * work if not attempts else 0.0
            length = max(1, int(round(run + wait)))
            cpu_avg = cpu0 * het[0] * eff.cpu * mslow[m] ** -0.5 * run / (run + wait) \
                * rng.lognormal(0, M.WINDOW_USAGE_SIGMA)
            cpu_max = cpu0 * het[0] * eff.max_cpu * peak_cpu * rng.lognormal(0, M.WINDOW_USAGE_SIGMA)
            cpu_max = max(cpu_max, cpu_avg * 1.02)
            mem_avg = mem0 * het[1] * eff.mem * rng.lognormal(0, M.WINDOW_USAGE_SIGMA)
            mem_max = mem_avg * float(rng.uniform(1.02, 1.5))
            use = (round(cpu_avg, 2), round(cpu_max, 2), round(mem_avg, 2), round(mem_max, 2))
            if final in ("Waiting", "Ready", "Cancelled"):
                attempts.append((final, None, None, None, None, None, None, None))
                break
            if final == "Running":
                attempts.append(("Running", now, None, m, *use))
                break
            if interrupts < n_evict:
                end = now + max(1, int(rng.uniform(0.2, 0.9) * length))
                attempts.append(("Interrupted", now, end, m, *use))
                interrupts += 1
            else:
                p_fail = 0.0
                if failure_prone:
                    p_fail = (M.FAILURE_PRONE_FIRST_FAIL_P if failures == 0
                              else 1.0 - M.ELSAYED_ATTEMPT_SUCCESS[min(failures, 3)])
                if rng.random() < p_fail:
                    end = now + max(1, int(rng.uniform(*M.FAIL_AT_FRACTION) * length))
                    attempts.append(("Failed", now, end, m, *use))
                    failures += 1
                    if failures > budget:
                        break
                else:
                    attempts.append(("Terminated", now, now + length, m, *use))
                    break
            now = attempts[-1][2] + int(rng.uniform(1, 60))
        total = len(attempts)
        for k, a in enumerate(attempts, start=1):
            status, st, en, m, ca, cm, ma, mm = a
            mid = None if m is None else f"m_{m + 1}"
            if rng.random() < 0.005 and ca is not None:   # some empty usage fields
                ca = cm = ma = mm = None
            rows.append((ins, task_name, job_name, task_type, status, st, en, mid, k, total,
                         ca, cm, ma, mm))
        last = attempts[-1]
        lat = (last[2] - last[1]) if last[0] == "Terminated" else None
        n_term += lat is not None
        trows.append(dict(job_name=job_name, task_name=task_name, instance_name=ins,
                          status=last[0], start_time=last[1], end_time=last[2], latency_s=lat,
                          attempts=total, failures=failures, interruptions=interrupts,
                          cause=labels[i], severity=float(sev[i]),
                          cpu_avg=last[4], mem_avg=last[6]))
    jrows.append(dict(job_name=job_name, task_name=task_name, kind=kind, task_type=task_type,
                      n_instances=n_inst, n_terminated=n_term,
                      should_select=bool(n_inst >= min_instances), causes=causes.label(),
                      failure_prone=bool(failure_prone), median_run_s=median, noise_sigma=sigma))
