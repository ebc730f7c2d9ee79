"""The selection written the way the NURD authors' preprocessing did it, for benchmarks/ingest.py's
(c) and (c'): a pandas row loop over the same parts (``child_baseline``), and the authors' own
task_usage filter idiom (``child_authors_idiom``). Each runs in a child process of the benchmark."""

from __future__ import annotations

import gzip
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.ingest_parts import TABLES

USAGE_COLS = ["start_time", "end_time", "job_id", "task_index", "machine_id", "cpu_rate",
              "canonical_memory", "assigned_memory", "unmapped_page_cache", "total_page_cache",
              "maximum_memory", "disk_io_time", "local_disk_space", "maximum_cpu_rate",
              "maximum_disk_io_time", "cpi", "mai", "sample_portion", "aggregation_type",
              "sampled_cpu_usage"]
TASK_EVENT_COLS = ["time", "missing_info", "job_id", "task_index", "machine_id", "event_type",
                   "user_name", "scheduling_class", "priority", "cpu_request", "memory_request",
                   "disk_request", "different_machine"]
JOB_EVENT_COLS = ["time", "missing_info", "job_id", "event_type", "user_name", "scheduling_class",
                  "job_name", "logical_job_name"]
SENTINEL_US = 2 ** 63 - 1



def child_baseline(trace: str, max_usage_rows: int | None) -> dict:
    """The selection as a pandas row loop (the authors' style), over every part of ``trace``."""
    import numpy as np
    import pandas as pd
    started = time.perf_counter()
    rows = {t: 0 for t in TABLES}
    files = {t: sorted((Path(trace) / t).glob("part-*-of-*.csv.gz")) for t in TABLES}

    # 1. job_events: largest scheduling class per job
    max_class: dict[int, int] = {}
    for f in files["job_events"]:
        df = pd.read_csv(f, header=None, names=JOB_EVENT_COLS)
        for row in df.itertuples(index=False):
            rows["job_events"] += 1
            c = row.scheduling_class
            if row.job_id not in max_class or c > max_class[row.job_id]:
                max_class[row.job_id] = c

    # 2. task_events: per task first SCHEDULE, final FINISH, last terminal event, EV/FL times
    first_sched: dict = {}
    final_finish: dict = {}
    last_term: dict = {}
    ev_times: dict = defaultdict(list)
    fl_times: dict = defaultdict(list)
    job_tasks: dict = defaultdict(set)
    for f in files["task_events"]:
        df = pd.read_csv(f, header=None, names=TASK_EVENT_COLS)
        for row in df.itertuples(index=False):
            rows["task_events"] += 1
            key = (row.job_id, row.task_index)
            job_tasks[row.job_id].add(row.task_index)
            et, tm = row.event_type, row.time
            if et == 1:
                if key not in first_sched or tm < first_sched[key]:
                    first_sched[key] = tm
            elif et == 4:
                if key not in final_finish or tm > final_finish[key]:
                    final_finish[key] = tm
            if 2 <= et <= 6:
                if key not in last_term or (tm, et) > last_term[key]:
                    last_term[key] = (tm, et)
            if et == 2:
                ev_times[key].append(tm)
            elif et == 3:
                fl_times[key].append(tm)

    selected_jobs = {j for j, ts in job_tasks.items() if max_class.get(j, -1) >= 1 and len(ts) >= 100}
    finished = {}
    for key, (tm, et) in last_term.items():
        if key[0] not in selected_jobs or et != 4:
            continue
        s = first_sched.get(key)
        ff = final_finish[key]
        if s is None or s == 0 or ff == SENTINEL_US:
            continue
        finished[key] = (s, ff)

    # 3. task_usage: per task duration-weighted means and maxima of the windows that
    #    ended by the final FINISH
    mean_cols = ["cpu_rate", "sampled_cpu_usage", "canonical_memory", "assigned_memory",
                 "unmapped_page_cache", "total_page_cache", "disk_io_time", "local_disk_space",
                 "cpi", "mai"]
    max_cols = ["maximum_cpu_rate", "maximum_memory", "maximum_disk_io_time"]
    acc: dict = {}
    limit = max_usage_rows if max_usage_rows else float("inf")
    done = False
    for f in files["task_usage"]:
        for df in pd.read_csv(f, header=None, names=USAGE_COLS, chunksize=500_000):
            for row in df.itertuples(index=False):
                if rows["task_usage"] >= limit:
                    done = True
                    break
                rows["task_usage"] += 1
                key = (row.job_id, row.task_index)
                fin = finished.get(key)
                if fin is None or row.end_time > fin[1]:
                    continue
                a = acc.get(key)
                if a is None:
                    a = acc[key] = {"w": [0.0] * len(mean_cols), "d": [0.0] * len(mean_cols),
                                    "m": [-np.inf] * len(max_cols)}
                dur = (row.end_time - row.start_time) / 1e6
                for i, c in enumerate(mean_cols):
                    v = getattr(row, c)
                    if v == v:   # not NaN (empty field)
                        a["w"][i] += v * dur
                        a["d"][i] += dur
                for i, c in enumerate(max_cols):
                    v = getattr(row, c)
                    if v == v and v > a["m"][i]:
                        a["m"][i] = v
            if done:
                break
        if done:
            break

    tasks = []
    for key, a in acc.items():
        s, ff = finished[key]
        feats = [w / d if d > 0 else None for w, d in zip(a["w"], a["d"])]
        tasks.append((key, (ff - s), sum(t < ff for t in ev_times.get(key, ())),
                      sum(t < ff for t in fl_times.get(key, ())), feats, a["m"]))
    return {"seconds": time.perf_counter() - started, "rows": rows, "partial": done,
            "check": {"jobs": len(selected_jobs), "tasks": len(tasks),
                      "sum_latency_us": int(sum(t[1] for t in tasks)),
                      "evictions": int(sum(t[2] for t in tasks)), "failures": int(sum(t[3] for t in tasks))}}


def child_authors_idiom(trace: str, n_rows: int) -> dict:
    """(c') the authors' exact task_usage filter idiom (data/filtertoproductiontaskusage.py):
    read_csv(chunksize=1000), ``for index, row in chunk.iterrows()``, ``chunk.drop(index,
    inplace=True)`` for rows of non-selected jobs, ``pd.concat`` of the kept chunks. On the
    first ``n_rows`` task_usage rows of the first part; the selected jobs are taken as given
    (from job_events + task_events, not timed). The ~n_rows rows are every k-th 1,000-row
    chunk of the part (so selected and rejected replicas are in proportion); only the loop over
    those chunks is timed (parsing is not: this favours (c'))."""
    import pandas as pd
    f = sorted((Path(trace) / "task_usage").glob("part-*-of-*.csv.gz"))[0]
    je = pd.read_csv(sorted((Path(trace) / "job_events").glob("part-*"))[0], header=None, names=JOB_EVENT_COLS)
    te = pd.read_csv(sorted((Path(trace) / "task_events").glob("part-*"))[0], header=None, names=TASK_EVENT_COLS)
    schedulingclass = je.groupby("job_id").scheduling_class.max().to_dict()
    parallelism = te.groupby("job_id").task_index.nunique().to_dict()
    total = sum(1 for _ in gzip.open(f, "rb"))
    every = max(1, total // max(1, n_rows))
    df = pd.DataFrame()
    done = 0
    seconds = 0.0
    for ci, chunk in enumerate(pd.read_csv(f, header=None, names=USAGE_COLS, chunksize=1000)):
        if ci % every or done >= n_rows:
            continue     # chunks spread over the whole part; parsing them is not timed
        started = time.perf_counter()
        for index, row in chunk.iterrows():
            x = row["job_id"]
            if x in schedulingclass and x in parallelism:
                if schedulingclass[x] == 0 or parallelism[x] < 100:
                    chunk.drop(index, inplace=True)
            else:
                chunk.drop(index, inplace=True)
        df = pd.concat([df, chunk])
        seconds += time.perf_counter() - started
        done += 1000
    return {"seconds": seconds, "rows": done, "kept": len(df)}
