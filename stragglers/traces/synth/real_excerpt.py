"""Numbers measured on the real Google 2011 excerpt (clusterdata-2011-2: job_events complete,
task_events parts 0-13 = the first ~19.5 h, 10,000 rows of task_usage part 0), by
``studies/realism/measure_real_excerpt.py`` (its output, rounded). The embedded generator draws
from them where docs/SYNTHETIC_TRACE.md marks a number "real excerpt".

Quantile knots: values at the cumulative probabilities ``KNOTS``; ``draw`` inverts the
piecewise-linear CDF through them (in log space for positive quantities), so the draws have
the excerpt's quantiles at every knot. Populations: "selected" = production (max scheduling
class >= 1) jobs with >= 100 task indices; "other" = every other job with task events.
"""

from __future__ import annotations

import numpy as np

KNOTS = (0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0)

# per selected job with >= 100 finished in-window tasks (90 jobs)
JOB_P50_LATENCY_S = (21.49, 30.99, 33.42, 56.62, 150.3, 1043.8, 9953.8, 13657.2, 45924.9)
JOB_LOG_P90_OVER_P50 = (0.000382, 0.007768, 0.017576, 0.109752, 0.339881, 0.496877, 1.008746, 1.310578, 1.881686)
SELECTED_JOB_TASKS = (100, 100, 100, 120, 204, 386, 837, 995.6, 5500)
# in-window tasks of selected jobs: SUBMIT -> first SCHEDULE
SCHEDULE_DELAY_S = (0.6866, 0.8129, 1.5254, 2.1031, 10.581, 35.821, 51.900, 60.427, 6210.3)
# generator 3: waits are per job. Per selected job (>= 20 in-window tasks with their SUBMIT in the
# window) the median SUBMIT -> first SCHEDULE delay, and each task's delay over its job's median
SELECTED_JOB_MEDIAN_SCHEDULE_DELAY_S = (0.6878, 0.7525, 0.7822, 1.4224, 2.0832, 27.561, 33.489, 42.127, 2385.8)
SCHEDULE_DELAY_OVER_JOB_MEDIAN = (0.003492, 0.164055, 0.674741, 0.969338, 1.0, 1.030471, 1.217964, 1.365312, 41.84)
# generator 3: evictions are per job. Per selected job the share of its in-window tasks with at
# least one EVICT (most jobs have none; 6.7 % over all tasks), the number of evictions of an
# evicted task (5 = 5 or more) and the EVICT -> next SCHEDULE delay of a re-scheduled task
SELECTED_JOB_EVICTED_SHARE = (0.0, 0.0, 0.0, 0.0, 0.0, 0.01, 0.053968, 0.110067, 1.0)
EVICTIONS_PER_EVICTED_TASK = {1: 0.521955, 2: 0.269534, 3: 0.124972, 4: 0.052691, 5: 0.030849}
EVICT_RESCHEDULE_DELAY_S = (0.6523, 1.6099, 1.8869, 12.172, 111.36, 1204.8, 3704.4, 8367.8, 33984.6)
# how the in-window evicted tasks of selected jobs end: 73.6 % KILL, 23.4 % still evicted when the
# excerpt ends, 3.0 % FINISH
EVICTED_TASK_FINISH_P = 0.030173
# other jobs (not selected) with task events: tasks per job
OTHER_JOB_TASKS = (1, 1, 1, 1, 1, 1, 15, 50, 20010)

OTHER_JOBS_PER_SELECTED_JOB = 53.39      # 18,794 other jobs with task events / 352 selected
OTHER_JOBS_PRODUCTION_SHARE = 0.6596
# job end states (job_events: 3 FAIL, 4 FINISH, 5 KILL, 6 LOST; 'none' = no end inside the excerpt)
SELECTED_JOB_END = {"KILL": 0.568182, "FAIL": 0.105114, "FINISH": 0.028409, "none": 0.298295}
OTHER_JOB_END = {"FINISH": 0.518357, "KILL": 0.351123, "FAIL": 0.011706, "LOST": 0.000106, "EVICT": 0.00016,
                 "none": 0.118548}
# in-window tasks: share with at least one EVICT / FAIL
SELECTED_TASK_EVICT_P = 0.067031
SELECTED_TASK_FAIL_P = 0.014399
OTHER_TASK_EVICT_P = 0.070201
OTHER_TASK_FAIL_P = 0.027142
# tasks of killed selected jobs, pooled: 53.2% FINISH, 27.8% KILL, 2.5% EVICT, 16.4% none, 0.1% FAIL
# generator 3: per selected job killed inside the task_events window (>= 100 in-window tasks), the
# share of its in-window tasks that finished: most keep nearly all (median 0.93, p25 0.85) and about
# a tenth finished none. Generator 2 drew it uniformly from 0.27 to 1 (the pooled mean 0.64).
KILLED_JOB_FINISHED_SHARE = (0.0, 0.0, 0.0, 0.85, 0.93, 0.97, 0.989194, 0.99375, 0.998047)

# re-executions (sql/reexecution_pairs.sql on the excerpt; docs/EVALUATION.md, "What a copy buys"):
# finished first lives scheduled again after their FINISH (3,841 of 311,526 finished tasks, every
# job), and the FINISH -> next SCHEDULE gap of the 3,176 pairs
FINISHED_TASK_RERUN_P = 3841 / 311526
REEXECUTION_GAP_S = (2.4458, 10.344, 18.052, 29.319, 48.596, 329.04, 786.72, 1115.2, 4936.1)

# per-job mean of the usage rows of the 10,000-row task_usage sample (one 5-minute window,
# 593 jobs): one value per job, as the generator draws a job's usage level
USAGE = {
    "cpu_rate": (0, 0, 4.816e-05, 0.0001779, 0.001172, 0.007339, 0.02855, 0.05385, 0.2909),
    "canonical_memory": (0, 0, 0.0002692, 0.001053, 0.006149, 0.02286, 0.07935, 0.09096, 0.291),
    "total_page_cache": (0, 0, 0.0001511, 0.0003481, 0.0006714, 0.001295, 0.002845, 0.004812, 0.1071),
    "disk_io_time": (0, 0, 0, 3.814e-06, 1.049e-05, 4.133e-05, 0.0001761, 0.0004985, 0.01922),
    "cpi": (0.6425, 1.075, 1.201, 1.681, 3.613, 7.52, 15.33, 19.72, 30.57),
    "mai": (7.209e-05, 0.001172, 0.001552, 0.003094, 0.01143, 0.03211, 0.07045, 0.09129, 0.1475),
}


def draw(rng: np.random.Generator, values, size=None, *, floor: float = 1e-9, upto: float = 1.0,
         log: bool = True):
    """Inverse-CDF draws through the knots (log-linear between them; values below ``floor``
    count as ``floor``). ``upto`` < 1 caps the top: draws above that quantile take its value
    (e.g. 0.95: the top 5 % sit at the 95 % point; the quantiles below are unchanged).
    ``log=False``: linear between the knots, for shares in [0, 1] whose knots include 0."""
    u = np.minimum(rng.random(size), upto)
    if not log:
        return np.interp(u, KNOTS, np.asarray(values, dtype=float))
    v = np.log(np.maximum(np.asarray(values, dtype=float), floor))
    return np.exp(np.interp(u, KNOTS, v))
