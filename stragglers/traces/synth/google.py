"""Synthetic trace in the exact layout of Google clusterdata-2011-2: the entry point, ``generate_google``.

The machines and the jobs are drawn (google_jobs.py), each task is simulated (google_sim.py),
the job and task events are made rows here and written in parts with the usage rows
(google_usage.py), and the truth beside them (google_truth.py). See docs/SYNTHETIC_TRACE.md for the model and where each
number comes from.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import model as M
from .formats import (
    file_sizes,
    mark_empty_parts_on_purpose,
    published_dir,
    FAIL, FINISH, KILL, S, SCHEDULE, SENTINEL_US, SUBMIT, TRACE_START_US,
    UPDATE_PENDING, UPDATE_RUNNING, USAGE_WINDOW_US, part_name,
    schema_csv_text, write_gzip_lines, write_text,
)
from .google_jobs import _draw_jobs, _machines
from .google_sim import _simulate_tasks
from .google_truth import _truth_frames, _write_reexecutions, _write_truth
from .google_usage import _usage_rows

# Scale and timing (docs/SYNTHETIC_TRACE.md says where each number comes from).
SUBMIT_SPAN_S = 6 * 3600                    # INVENTED: jobs arrive over the first 6 hours


def generate_google(
    out_dir: Path,
    *,
    seed: int = 2011,
    n_jobs: int = 48,
    min_tasks: int = 100,
    max_tasks: int = 2000,
    n_parts: int = 8,
    n_machines: int = 600,
    submit_span_s: int = SUBMIT_SPAN_S,
    truth_dir: Path | None = None,
    other_jobs: int | None = None,
    reexecuted_share: float = 0.0,
    cause_mix: str = "hound",
    skew_share: float | None = None,
) -> M.GenerationSummary:
    """Write a synthetic clusterdata-2011-2 trace under out_dir (replacing it).

    ``reexecuted_share`` > 0: that share of the finished tasks of the jobs not killed runs again on
    another machine after its FINISH (``_write_reexecutions``; the real excerpt's rate is
    ``real_excerpt.FINISHED_TASK_RERUN_P``); 0, the default, writes none (the embedded trace).
    ``cause_mix``: a name of ``model.CAUSE_MIXES`` (the jobs' cause mix; 'hound', the default, is the
    embedded trace); ``skew_share`` overrides its share of the skew causes kept (the fit's grid).

    Deterministic: same arguments -> byte-identical files. Returns the
    summary with ground-truth frames; writes them as parquet to truth_dir
    (which must not be inside out_dir) when given.
    """
    out_dir = Path(out_dir)
    if truth_dir is not None:
        truth_dir = Path(truth_dir)
        if truth_dir.resolve().is_relative_to(out_dir.resolve()):
            raise ValueError("truth_dir must not be inside the trace directory")
    if not 0.0 <= reexecuted_share <= 1.0:
        raise ValueError(f"reexecuted_share={reexecuted_share}: must lie in [0, 1]")
    if cause_mix not in M.CAUSE_MIXES:
        raise ValueError(f"cause_mix={cause_mix!r}: must be one of {', '.join(M.CAUSE_MIXES)}")
    skew_share = M.CAUSE_MIXES[cause_mix] if skew_share is None else float(skew_share)
    M.cause_mix_coverages(skew_share)   # bounds checked before anything is written
    if n_parts < 1 or n_machines < 2 or min_tasks < 2:
        raise ValueError("n_parts >= 1, n_machines >= 2, min_tasks >= 2 required")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2011]))

    # --- machines ---------------------------------------------------------
    machine_ids = _machines(rng, n_machines)
    mtype = M.machine_types(rng, n_machines)
    mslow = M.machine_slowdowns(rng, n_machines)
    slow_pool = np.argsort(-mslow)[: max(1, n_machines // 5)]

    # --- jobs and their tasks ---------------------------------------------
    jobs = _draw_jobs(rng, seed, n_jobs, min_tasks, max_tasks, other_jobs, submit_span_s, skew_share)
    tasks_by_job = _simulate_tasks(rng, jobs, mslow, slow_pool)

    reexecutions = None
    if reexecuted_share > 0:
        reexecutions = _write_reexecutions(np.random.default_rng(np.random.SeedSequence([seed, 2011, 36])),
                                           jobs, tasks_by_job, mslow, reexecuted_share)

    # at least one UPDATE_RUNNING row at every scale: mid-run of the longest
    # finished task of a non-selected job (if the random ones produced none)
    if not any(e[1] == UPDATE_RUNNING for ts in tasks_by_job.values() for t in ts for e in t.events):
        pool = [t for j in jobs if j.kind in ("class0", "boundary_below", "small")
                for t in tasks_by_job[j.job_id] if t.truth.end_state == "FINISH"]
        if pool:
            t = max(pool, key=lambda t: (t.intervals[-1][2] - t.intervals[-1][1], t.truth.job_id, t.index))
            m, s0, e0, _ = t.intervals[-1]
            t.events.insert(len(t.events) - 1, [s0 + (e0 - s0) // 2, UPDATE_RUNNING, m, t.events[-1][3]])

    # --- trace end ----------------------------------------------------------
    last = TRACE_START_US
    for tasks in tasks_by_job.values():
        for t in tasks:
            for e in t.events:
                if e[0] != SENTINEL_US:
                    last = max(last, e[0])
    trace_end = ((last // USAGE_WINDOW_US) + 2) * USAGE_WINDOW_US

    # --- job events ---------------------------------------------------------
    for j in jobs:
        tasks = tasks_by_job[j.job_id]
        j.events = [(j.submit_us, SUBMIT, j.sched_class)]
        if j.raised_class is not None:
            j.events.append((j.submit_us + S // 2, UPDATE_PENDING, j.raised_class))
        cls = j.max_class if j.raised_class is not None else j.sched_class
        if j.kind == "no_tasks":
            j.events.append((j.submit_us + int(rng.uniform(60, 1800) * S), KILL, cls))
            continue
        scheds = [t.truth.first_schedule_us for t in tasks if t.truth.first_schedule_us is not None]
        if scheds:
            j.events.append((min(scheds), SCHEDULE, cls))
        if j.service:
            j.events.append((SENTINEL_US, KILL, cls))
            continue
        end = max(t.events[-1][0] for t in tasks)
        states = {t.truth.end_state for t in tasks}
        etype = KILL if j.kill_job else (FAIL if "FAIL" in states else FINISH)
        j.events.append((end, etype, cls))

    # --- rows ---------------------------------------------------------------
    slice_us = -(-(trace_end - TRACE_START_US) // n_parts)

    def part_of(tu: int) -> int:
        return int(min(max((tu - TRACE_START_US) // slice_us, 0), n_parts - 1))

    je_rows: list[list] = [[] for _ in range(n_parts)]
    for j in jobs:
        for k, (tu, et, cls) in enumerate(j.events):
            line = f"{tu},,{j.job_id},{et},{j.user},{cls},{j.name},{j.logical}"
            je_rows[part_of(tu)].append((tu, j.job_id, k, line))

    # missing-info field: a few rows (~0.013% of task events; at least 4)
    n_task_events = sum(len(t.events) for ts in tasks_by_job.values() for t in ts)
    cand = []
    for j in jobs:
        selected = j.max_class >= 1 and j.n_tasks >= 100
        for t in tasks_by_job[j.job_id]:
            for k, e in enumerate(t.events):
                if e[1] == UPDATE_RUNNING or (not selected and e[1] == FINISH):
                    cand.append((j.job_id, t.index, k))
    n_missing = min(len(cand), max(4, int(round(0.00013 * n_task_events))))
    missing = {cand[i] for i in rng.choice(len(cand), size=n_missing, replace=False)} if cand else set()

    te_rows: list[list] = [[] for _ in range(n_parts)]
    for j in jobs:
        cpu_r, mem_r, disk_r = ("%.4g" % x for x in j.req)
        for t in tasks_by_job[j.job_id]:
            for k, (tu, et, mi, cls) in enumerate(t.events):
                mid = "" if mi < 0 else str(int(machine_ids[mi]))
                mis = str(int(rng.integers(0, 3))) if (j.job_id, t.index, k) in missing else ""
                line = (f"{tu},{mis},{j.job_id},{t.index},{mid},{et},{j.user},{cls},{j.priority},"
                        f"{cpu_r},{mem_r},{disk_r},{j.diff_machine}")
                te_rows[part_of(tu)].append((tu, j.job_id, t.index, k, line))

    usage_lines, usage_start = _usage_rows(rng, jobs, tasks_by_job, machine_ids, mslow, trace_end)
    tu_parts = np.minimum(np.maximum((usage_start - TRACE_START_US) // slice_us, 0), n_parts - 1)

    # --- write ----------------------------------------------------------------
    with published_dir(out_dir) as stage:
        mark_empty_parts_on_purpose(stage)   # its time slices without events are parts without rows
        for p in range(n_parts):
            write_gzip_lines(stage / part_name("job_events", p, n_parts),
                             [r[-1] for r in sorted(je_rows[p], key=lambda r: r[:-1])])
            write_gzip_lines(stage / part_name("task_events", p, n_parts),
                             [r[-1] for r in sorted(te_rows[p], key=lambda r: r[:-1])])
            idx = np.flatnonzero(tu_parts == p)
            write_gzip_lines(stage / part_name("task_usage", p, n_parts),
                             [usage_lines[i] for i in idx.tolist()])
        plat = [M.hash_name("platform", k) for k in range(len(M.OUYANG_SERVER_TYPES))]
        me = [f"0,{int(machine_ids[i])},0,{plat[mtype[i]]},{M.OUYANG_SERVER_TYPES[mtype[i]][0]:.4g},"
              f"{M.OUYANG_SERVER_TYPES[mtype[i]][1]:.4g}" for i in np.argsort(machine_ids)]
        write_gzip_lines(stage / "machine_events" / "part-00000-of-00001.csv.gz", me)
        write_text(stage / "schema.csv",
                   schema_csv_text(("job_events", "machine_events", "task_events", "task_usage")))

    files = file_sizes(out_dir)

    truth_jobs, truth_tasks = _truth_frames(jobs, tasks_by_job)
    counts = dict(
        jobs=len(jobs),
        jobs_with_task_events=int((truth_jobs.n_tasks > 0).sum()),
        selected_jobs=int(truth_jobs.should_select.sum()),
        tasks=int(len(truth_tasks)),
        selected_tasks=int(truth_tasks.job_id.isin(truth_jobs.job_id[truth_jobs.should_select]).sum()),
        job_events=sum(len(r) for r in je_rows),
        task_events=sum(len(r) for r in te_rows),
        usage_rows=len(usage_lines),
        machines=n_machines,
        trace_end_us=int(trace_end),
        part_slice_us=int(slice_us),
    )
    params = dict(seed=seed, n_jobs=n_jobs, min_tasks=min_tasks, max_tasks=max_tasks,
                  n_parts=n_parts, n_machines=n_machines, submit_span_s=submit_span_s)
    if skew_share != 1.0:   # the default's params (and generation.json) stay as they were
        params.update(cause_mix=cause_mix, skew_share=skew_share)
    if reexecutions is not None:
        params["reexecuted_share"] = reexecuted_share
        counts["reexecuted_tasks"] = len(reexecutions)
        reexecutions = reexecutions.assign(
            first_machine=machine_ids[reexecutions.first_machine_index.to_numpy(int)],
            second_machine=machine_ids[reexecutions.second_machine_index.to_numpy(int)])
    summary = M.GenerationSummary("google_2011", out_dir, seed, M.GENERATOR_VERSION, params, files,
                                  counts, truth_jobs, truth_tasks, reexecutions=reexecutions)
    if truth_dir is not None:
        _write_truth(truth_dir, summary)
    return summary
