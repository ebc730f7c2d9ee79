"""The Google-format generator's task_usage rows: each attempt's 5-minute windows with its job's
usage profile, the task's and the window's variation, the cause's effect and the machine's speed.

See docs/SYNTHETIC_TRACE.md for the model and where each number comes from.
"""

from __future__ import annotations

import numpy as np

from . import model as M
from .formats import S, TRACE_START_US, USAGE_WINDOW_US


def _fmt_float_col(values: np.ndarray, missing: np.ndarray | None = None) -> list[str]:
    out = ["%.4g" % v for v in values.tolist()]
    if missing is not None:
        for i in np.flatnonzero(missing).tolist():
            out[i] = ""
    return out



def _usage_rows(rng, jobs, tasks_by_job, machine_ids, mslow, trace_end):
    """task_usage rows (formatted lines, sorted by start time) and their start times."""
    iv_job, iv_task, iv_m, iv_s, iv_e, iv_slow, iv_t0 = [], [], [], [], [], [], []
    task_rows = []   # per task: (job j index, task object)
    for ji, j in enumerate(jobs):
        for t in tasks_by_job[j.job_id]:
            if not t.truth.has_usage or not t.intervals:
                continue
            ti = len(task_rows)
            task_rows.append((ji, t))
            for m, s, e, se in t.intervals:
                s2, e2 = max(s, TRACE_START_US), min(e, trace_end)
                if e2 <= s2:
                    continue
                iv_task.append(ti); iv_job.append(ji); iv_m.append(m)
                iv_s.append(s2); iv_e.append(e2); iv_slow.append(se); iv_t0.append(s)
    if not iv_s:
        return [], np.zeros(0, dtype=np.int64)
    P = USAGE_WINDOW_US
    s = np.array(iv_s, dtype=np.int64); e = np.array(iv_e, dtype=np.int64)
    k0 = s // P
    k1 = (e - 1) // P
    nwin = (k1 - k0 + 1).astype(np.int64)
    rep = np.repeat(np.arange(len(s)), nwin)
    off = np.arange(len(rep)) - np.repeat(np.cumsum(nwin) - nwin, nwin)
    k = k0[rep] + off
    ws = np.maximum(s[rep], k * P)
    we = np.minimum(e[rep], (k + 1) * P)
    n = len(rep)

    ti = np.array(iv_task)[rep]
    ji = np.array(iv_job)[rep]
    mi = np.array(iv_m)[rep]
    t0 = np.array(iv_t0, dtype=np.int64)[rep]
    slow_end = np.array(iv_slow, dtype=np.int64)[rep]
    dur = (we - ws).astype(float)
    elapsed = ((ws + we) / 2.0 - np.maximum(t0, 0)) / S
    ramp = 0.5 + 0.5 * np.minimum(1.0, elapsed / 600.0)
    phi = np.clip((np.minimum(we, slow_end) - ws) / np.maximum(dur, 1.0), 0.0, 1.0)

    # per task arrays
    def tarr(f):
        return np.array([f(jobs[a], t) for a, t in task_rows], dtype=float)[ti]
    prof = lambda key: tarr(lambda j, t: j.profile[key])
    het = np.array([t.het for _, t in task_rows])[ti]
    eff = lambda key: tarr(lambda j, t: getattr(t.eff, key))
    ksl = mslow[mi]
    noise = lambda: rng.lognormal(0.0, M.WINDOW_USAGE_SIGMA, size=n)

    cpu = prof("cpu") * het[:, 0] * eff("cpu") * ksl ** -0.5 * (1.0 - 0.9 * phi) * noise()
    cmu = prof("mem") * het[:, 1] * eff("mem") * ramp * (1.0 - 0.6 * phi) * noise()
    amu = cmu * prof("assign_ratio") * rng.uniform(1.0, 1.05, size=n)
    tpc = prof("pc") * het[:, 2] * eff("page_cache") * ramp * noise()
    upc = tpc * prof("unmapped_ratio") * rng.uniform(0.8, 1.0, size=n)
    maxmu = cmu * (1.0 + rng.exponential(0.1, size=n))
    mio = prof("io") * het[:, 3] * eff("io") * noise()
    mdk = prof("disk") * het[:, 4] * eff("disk_space") * ramp * noise()
    maxcpu = np.maximum(prof("cpu") * het[:, 0] * eff("max_cpu") * ksl ** -0.3 * prof("peak_cpu") * noise(),
                        cpu * 1.05)
    maxio = np.maximum(prof("io") * het[:, 3] * eff("max_io") * prof("peak_io") * noise(), mio * 1.05)
    cpi = prof("cpi") * het[:, 5] * eff("cpi") * ksl ** 0.5 * noise()
    mai = prof("mai") * het[:, 6] * eff("mai") * noise()
    tiny = dur < 1.0 * S   # impossible CPI/MAI on tiny-CPU-time windows (trace notes)
    absurd = tiny & (rng.random(n) < 0.5)
    cpi = np.where(absurd, cpi * rng.uniform(20, 200, size=n), cpi)
    mai = np.where(absurd, mai * rng.uniform(5, 50, size=n), mai)
    sample_portion = np.where(rng.random(n) < 0.1, rng.uniform(0.0, 1.0, size=n), 0.0)
    agg = np.where(rng.random(n) < 0.05, 1 - prof("agg"), prof("agg")).astype(int)
    scpu = cpu * rng.lognormal(0.0, 0.3, size=n)

    miss_cpi = rng.random(n) < 0.01          # no perf counters: CPI and MAI empty
    miss_maxcpu = rng.random(n) < 0.01
    miss_scpu = (prof("scpu") == 0) | (rng.random(n) < 0.02)

    cols = [
        ws.tolist(), we.tolist(),
        [jobs[a].job_id for a in ji.tolist()], [task_rows[x][1].index for x in ti.tolist()],
        machine_ids[mi].tolist(),
        _fmt_float_col(cpu), _fmt_float_col(cmu), _fmt_float_col(amu), _fmt_float_col(upc),
        _fmt_float_col(tpc), _fmt_float_col(maxmu), _fmt_float_col(mio), _fmt_float_col(mdk),
        _fmt_float_col(maxcpu, miss_maxcpu), _fmt_float_col(maxio),
        _fmt_float_col(cpi, miss_cpi), _fmt_float_col(mai, miss_cpi),
        _fmt_float_col(sample_portion), agg.tolist(), _fmt_float_col(scpu, miss_scpu),
    ]
    order = np.lexsort((we, np.array(cols[3]), np.array(cols[2], dtype=np.int64), ws))
    lines = [",".join(map(str, row)) for row in zip(*cols)]
    return [lines[i] for i in order.tolist()], ws[order]
