"""The Google-format generator's ground truth: the truth frames per job and per task, the truth
files (parquet and generation.json, shared with the Alibaba-format generator), and the tasks run
again after their FINISH (re-executions, with the truth of their second lives).

See docs/SYNTHETIC_TRACE.md for the model and where each number comes from.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import model as M
from . import real_excerpt as R
from .formats import FINISH, S, SCHEDULE, SUBMIT, TRACE_START_US, write_text


def _write_reexecutions(rng, jobs, tasks_by_job, mslow, share: float) -> pd.DataFrame:
    """Run again, after its FINISH, a share of the finished tasks of every in-window job not killed, as
    the real trace does (sql/reexecution_pairs.sql reads them): SUBMIT just after the FINISH, SCHEDULE
    on another machine after the excerpt's FINISH -> SCHEDULE gap, FINISH after the generator's
    re-execution model's latency (model.reexecution_work_s x that machine's slowdown). Own random
    stream ``rng``, after the first lives: those and the truth stay bit-identical. Returns one row per
    task run again (job_id, task_id, first and second machine index, second_latency_s)."""
    rows = []
    for j in jobs:
        if j.pre_trace or j.service or j.kill_job:
            continue
        for t in tasks_by_job[j.job_id]:
            tr = t.truth
            if tr.end_state != "FINISH" or rng.random() >= share:
                continue
            first_m = t.intervals[-1][0]
            m = first_m
            while m == first_m:
                m = int(rng.integers(len(mslow)))
            work = M.reexecution_work_s(rng, median_run_s=[j.median_run_s], noise_sigma=[j.noise_sigma],
                                        noise_ln=[np.log(tr.extra["noise"])], cause=[tr.cause], severity=[tr.severity])
            latency_us = max(int(float(work[0]) * mslow[m] * S), 1)
            gap_us = max(int(float(R.draw(rng, R.REEXECUTION_GAP_S)) * S), 2)
            cls = t.events[-1][3]
            finish = tr.final_finish_us
            start = finish + gap_us
            t.events.append([finish + min(int(rng.uniform(0.0, 1.0) * S), gap_us // 2), SUBMIT, -1, cls])
            t.events.append([start, SCHEDULE, m, cls])
            t.events.append([start + latency_us, FINISH, m, cls])
            t.intervals.append([m, start, start + latency_us, start])
            rows.append((j.job_id, t.index, first_m, m, latency_us / S))
    return pd.DataFrame(rows, columns=["job_id", "task_id", "first_machine_index", "second_machine_index",
                                       "second_latency_s"])



def _truth_frames(jobs, tasks_by_job):
    jrows, trows = [], []
    for j in jobs:
        tasks = tasks_by_job[j.job_id]
        n_fin = sum(1 for t in tasks if t.truth.end_state == "FINISH")
        sched_delay = [(t.truth.first_schedule_us - j.submit_us) / S
                       if t.truth.first_schedule_us is not None and j.submit_us > 0 else None for t in tasks]
        background = [M.background_events(t.truth.cause, t.truth.evictions, t.truth.failures, d)
                      for t, d in zip(tasks, sched_delay)]
        ran = [i for i, t in enumerate(tasks) if t.truth.first_schedule_us is not None]
        effective = M.effective_causes([tasks[i].truth.cause for i in ran], [background[i] for i in ran])
        jrows.append(dict(
            job_id=j.job_id, kind=j.kind, n_tasks=len(tasks),
            first_scheduling_class=j.sched_class, max_scheduling_class=j.max_class,
            priority=j.priority,
            should_select=bool(j.max_class >= 1 and len(tasks) >= 100),
            should_select_priority_rule=bool(j.priority in (9, 10, 11) and len(tasks) >= 100),
            n_finished=n_fin, submit_us=j.submit_us, causes=j.causes.label(),
            causes_effective=effective.label(),
            failure_prone=j.failure_prone, job_killed=j.kill_job,
            median_run_s=j.median_run_s, noise_sigma=j.noise_sigma, median_wait_s=j.median_wait_s,
        ))
        for t, bg in zip(tasks, background):
            tr = t.truth
            lat = None
            if (tr.end_state == "FINISH" and tr.first_schedule_us is not None
                    and tr.first_schedule_us >= TRACE_START_US):
                lat = tr.final_finish_us - tr.first_schedule_us
            trows.append(dict(
                job_id=tr.job_id, task_index=tr.task_index,
                first_schedule_us=tr.first_schedule_us, final_finish_us=tr.final_finish_us,
                latency_us=lat, evictions=tr.evictions, failures=tr.failures,
                end_state=tr.end_state, has_usage=bool(tr.has_usage and t.intervals),
                cause=tr.cause, background=bg, severity=tr.severity, machine_slowdown=tr.machine_slowdown,
                final_schedule_us=tr.final_schedule_us, evict_lost_s=tr.evict_lost_s, fail_lost_s=tr.fail_lost_s,
                slow_start_s=tr.slow_start_s,
                job_causes=j.causes.label(),
            ))
    tj = pd.DataFrame(jrows).sort_values("job_id").reset_index(drop=True)
    tt = pd.DataFrame(trows)
    for c in ("first_schedule_us", "final_schedule_us", "final_finish_us", "latency_us"):
        tt[c] = tt[c].astype("Int64")
    tt = tt.sort_values(["job_id", "task_index"]).reset_index(drop=True)
    return tj, tt


def _write_truth(truth_dir: Path, summary: M.GenerationSummary) -> None:
    import json
    truth_dir.mkdir(parents=True, exist_ok=True)
    for name, df in (("truth_jobs", summary.truth_jobs), ("truth_tasks", summary.truth_tasks)):
        tmp = truth_dir / f".{name}.parquet.tmp"
        df.to_parquet(tmp, index=False)
        tmp.replace(truth_dir / f"{name}.parquet")
    meta = dict(trace=summary.trace, seed=summary.seed, generator_version=summary.generator_version,
                params=summary.params, counts=summary.counts, total_bytes=summary.total_bytes)
    write_text(truth_dir / "generation.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")
    summary.truth_dir = truth_dir
