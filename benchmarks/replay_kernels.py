"""Replay kernels: the Kaplan-Meier curve in numpy vs lifelines, and the engine's per-job state, in ONE run.

    python -m benchmarks.replay_kernels [--repeat 5] [--write docs/BENCHMARKS.md]

Two pieces of the replay that run at every decision of every job, each beside its baseline,
alternating, ``--repeat`` rounds (medians reported):

(1) The Kaplan-Meier curve (``stragglers.prediction.statistics.threshold``: ``km_curve``, ``km_quantile``,
    ``km_at``, numpy with lifelines' arithmetic) against lifelines' ``KaplanMeierFitter`` fitted and
    read the same way (``qth_survival_time``, ``survival_function_at_times``), on jobs of 100, 1,000
    and 10,000 durations (log-normal, 20-60% censored, fixed seed). Also ``online_threshold`` (what
    the replay asks per decision, q = 0.5 as ``copy_lease_seconds`` does) with its Kaplan-Meier
    quantile from the numpy curve against the same function with lifelines' quantile swapped in (the
    function as it was with lifelines), on the running job at a decision (tasks started at
    different times, so censorings fall among the events and the Kaplan-Meier branch runs).
(2) The replay engine (``stragglers.prediction.engine``) on one generated job of 1,000 tasks
    (``CopyJob``: 200 checks, one copy draw per seed of ``completion.RELAUNCH_SEEDS``): the oracle and
    a policy from flags (``policies.oracle``, ``policies.from_flags``), each under the four budgets
    (``engine.caps.Budget`` of ``tuning.BUDGETS``). What a budget reads at each check, the job's
    ``CheckState`` (tasks running, machine time so far, the durations' estimate, a copy's expected
    cost, the budget's base), computed once per job and shared by its policies (``job.state``, what
    the evaluation does) against recomputed for every policy (a fresh ``CopyJob`` per call). Also
    timed alone: ``CheckState.of`` and the compiled kernel of each policy with the state known.

Every pair is checked to give the same numbers (the largest absolute difference is printed; the
script stops if it is not 0). Wall clock and CPU time (this process) per call; the ratio is the
baseline's over the subject's. With ``--write`` the result replaces the section "Replay kernels:
the Kaplan-Meier curve and the engine's per-job state" of that file.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import subprocess
import time
import warnings
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from benchmarks.results import WRITE_HELP, publish_section
from stragglers.prediction.statistics import threshold
from stragglers.prediction.engine.draws import RELAUNCH_SEEDS, copy_draws
from stragglers.prediction.engine.caps import Budget
from stragglers.prediction.engine.job import CheckState, CopyJob
from stragglers.prediction.engine.policies import DEFAULT_POINT, Policy, from_flags, oracle
from stragglers.prediction.engine.replay import outcomes
from stragglers.prediction.verdicts.tuning import BUDGETS

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Replay kernels: the Kaplan-Meier curve and the engine's per-job state"
SEED = 20261127
SIZES = (100, 1_000, 10_000)
#: inputs per size (each with its own censored share), and how many passes over them one timing makes
INPUTS = 10
PASSES = {100: 5, 1_000: 2, 10_000: 1}
#: the quantile the replay asks online (a copy's least lease: the job's median)
Q = 0.5
#: the times km_at / survival_function_at_times read the curve at, per input
READ_AT = 10
TASKS, SHARE_NOT_FINISHING = 1_000, 0.03
#: the engine's checks of the generated job, and when the policy from flags flags a running task: once
#: it has run this many times the job's median latency
CHECKS, FLAG_AFTER_MEDIANS = 200, 1.5


# ----------------------------------------------------------------------------- the inputs

def censored_durations(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(durations, observed, times to read at): log-normal latencies (median 55 s, rounded to 0.1 s:
    ties, as a trace's have), a share of 20-60% censored at a uniform fraction of their latency."""
    y = np.round(rng.lognormal(4.0, 1.0, n), 1) + 0.1
    censored = rng.random(n) < rng.uniform(0.2, 0.6)
    d = np.where(censored, np.round(y * rng.uniform(0.05, 1.0, n), 1) + 0.1, y)
    return d, ~censored, np.sort(rng.uniform(0.0, float(d.max()) * 1.1, READ_AT))


def running_job(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """(finished latencies, running tasks' elapsed times, share of the started tasks still running) at
    a decision of a job whose tasks start at different times (waves over twice the median latency):
    20-60% of the started tasks still run."""
    y = rng.lognormal(4.0, 1.0, n)
    start = rng.uniform(0.0, 2.0 * float(np.median(y)), n)
    end = start + y
    want = rng.uniform(0.2, 0.6)
    grid = np.quantile(end, np.linspace(0.05, 0.95, 91))
    share = [((start <= t) & (end > t)).sum() / max((start <= t).sum(), 1) for t in grid]
    t = float(grid[int(np.argmin(np.abs(np.asarray(share) - want)))])
    running = (start <= t) & (end > t)
    return y[end <= t], t - start[running], float(running.sum() / (start <= t).sum())


def engine_job(rng: np.random.Generator) -> CopyJob:
    """One job as the engine replays it: latencies, starts on the job's wall clock (over twice the
    median latency), the tasks that finish, ``CHECKS`` checks evenly spaced from its first task's end
    to its last end, and one copy draw per relaunch seed."""
    y = rng.lognormal(4.0, 1.0, TASKS)
    start = rng.uniform(0.0, 2.0 * float(np.median(y)), TASKS)
    start -= start.min()
    finished = rng.random(TASKS) >= SHARE_NOT_FINISHING
    end = start + y
    checks = np.linspace(float(end.min()), float(end.max()), CHECKS + 1)[:-1]
    draws = tuple(copy_draws(y, "benchmark", 0, RELAUNCH_SEEDS, finished=finished))
    return CopyJob("benchmark", 0, np.arange(TASKS), start, y, finished, checks, draws)


def engine_policies(job: CopyJob) -> list[Policy]:
    """The oracle, and a policy from flags: a task flagged at the first check at which it has run
    ``FLAG_AFTER_MEDIANS`` times the job's median latency (while it still runs), ranked by its flag."""
    limit = FLAG_AFTER_MEDIANS * float(np.median(job.latency))
    flagged_at = np.full(len(job.task_ids), np.nan)
    for t in job.checks.tolist():
        late = np.isnan(flagged_at) & (t - job.start >= limit) & (job.end > t)
        flagged_at[late] = t
    return [oracle(job), from_flags("flag_after_median", DEFAULT_POINT, flagged_at, job.checks)]


# ----------------------------------------------------------------------------- the baselines

def lifelines_fit(d, e):
    from lifelines import KaplanMeierFitter
    return KaplanMeierFitter().fit(d, e)


def lifelines_curve(d, e) -> tuple[np.ndarray, np.ndarray]:
    sf = lifelines_fit(d, e).survival_function_
    return sf.index.to_numpy(), sf.iloc[:, 0].to_numpy()


def lifelines_quantile(d, e, q: float) -> float:
    """``km_quantile`` as lifelines answers it (the threshold module's quantile before the numpy curve)."""
    from lifelines.utils import qth_survival_time
    d = np.asarray(d, dtype=float)
    if len(d) == 0 or not np.any(e):
        return math.inf
    return float(qth_survival_time(1.0 - q, lifelines_fit(d, np.asarray(e, bool)).survival_function_))


def lifelines_at(d, e, at) -> np.ndarray:
    return lifelines_fit(d, e).survival_function_at_times(at).to_numpy()


@contextmanager
def lifelines_in_threshold():
    """``online_threshold`` with lifelines' Kaplan-Meier quantile (it reads ``km_quantile`` from its
    module at each call)."""
    own = threshold.km_quantile
    threshold.km_quantile = lifelines_quantile
    try:
        yield
    finally:
        threshold.km_quantile = own


def numpy_online(fin, el):
    return threshold.online_threshold(fin, el, Q)


def lifelines_online(fin, el):
    with lifelines_in_threshold():
        return threshold.online_threshold(fin, el, Q)


CAPS = [Budget(b) for b in BUDGETS]


def as_array(per_policy: list[list]) -> np.ndarray:
    """(policies, budgets, 3): JCT reduction, extra machine share, copies."""
    return np.array([[(o.jct_reduction, o.extra_machine_share, o.copies) for o in outs] for outs in per_policy])


def state_once(job: CopyJob, policies: list[Policy]) -> np.ndarray:
    """Every policy under every budget on one job whose ``CheckState`` is computed once (its first
    policy's run computes it, the others read it): what the evaluation does."""
    fresh = replace(job)
    return as_array([outcomes(fresh, p, CAPS) for p in policies])


def state_per_policy(job: CopyJob, policies: list[Policy]) -> np.ndarray:
    """The same with a fresh ``CopyJob`` per policy: each run computes the state again."""
    return as_array([outcomes(replace(job), p, CAPS) for p in policies])


def state_alone(job: CopyJob) -> CheckState:
    return CheckState.of(job)


def kernel_alone(job: CopyJob, policy: Policy) -> np.ndarray:
    """One policy under every budget on ``job``, its state already known."""
    return as_array([outcomes(job, policy, CAPS)])


# ----------------------------------------------------------------------------- measuring

def max_abs_diff(a, b) -> float:
    """The largest |a - b| over the finite values; the non-finite ones (inf, NaN) must match."""
    a, b = np.atleast_1d(np.asarray(a, dtype=float)), np.atleast_1d(np.asarray(b, dtype=float))
    if a.shape != b.shape:
        raise AssertionError(f"different shapes {a.shape} and {b.shape}")
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not (np.array_equal(fa, fb) and np.array_equal(a[~fa], b[~fb], equal_nan=True)):
        raise AssertionError("different non-finite values")
    return float(np.abs(a[fa] - b[fb]).max()) if fa.any() else 0.0


def timed(fn, calls: list[tuple], passes: int) -> tuple[float, float]:
    """(wall s, CPU s) per call of ``fn`` over ``calls`` (argument tuples), ``passes`` times."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(passes):
        for args in calls:
            fn(*args)
    n = passes * len(calls)
    return (time.perf_counter() - wall) / n, (time.process_time() - cpu) / n


def km_cases(seed: int) -> list[dict]:
    """One case per (kernel, size): the subject, its baseline, the argument tuples, how to compare."""
    cases = []
    for n in SIZES:
        rng = np.random.default_rng([seed, n])
        data = [censored_durations(n, rng) for _ in range(INPUTS)]
        jobs = [running_job(n, rng) for _ in range(INPUTS)]
        censored = [1.0 - float(e.mean()) for _, e, _ in data]
        cases += [
            dict(kernel="curve", n=n, subject=threshold.km_curve, baseline=lifelines_curve,
                 calls=[(d, e) for d, e, _ in data], censored=censored,
                 diff=lambda a, b: max(max_abs_diff(a[0], b[0]), max_abs_diff(a[1], b[1]))),
            dict(kernel="quantile", n=n, subject=lambda d, e: threshold.km_quantile(d, e, Q),
                 baseline=lambda d, e: lifelines_quantile(d, e, Q),
                 calls=[(d, e) for d, e, _ in data], censored=censored, diff=max_abs_diff),
            dict(kernel="at", n=n, subject=threshold.km_at, baseline=lifelines_at,
                 calls=list(data), censored=censored, diff=max_abs_diff),
            dict(kernel="online", n=n, subject=numpy_online, baseline=lifelines_online,
                 calls=[(f, el) for f, el, _ in jobs], censored=[s for _, _, s in jobs], diff=max_abs_diff),
        ]
    return cases


def run(repeat: int, seed: int = SEED, command: str = "") -> dict:
    warnings.filterwarnings("ignore")   # lifelines' and scipy's warnings on a fit are the same on both sides
    cases = km_cases(seed)
    job = engine_job(np.random.default_rng([seed, TASKS]))
    policies = engine_policies(job)
    known = replace(job)
    _ = known.state    # computed here: the kernel's timings below read it
    loads = [os.getloadavg()[0]]
    for case in cases:             # the answers compared (and imports, caches warmed) before any timing
        case["max_diff"] = max(case["diff"](case["subject"](*a), case["baseline"](*a)) for a in case["calls"])
        case["km_answered"] = (sum(math.isfinite(threshold.km_quantile(*threshold._observations(*a), Q))
                                   for a in case["calls"]) if case["kernel"] == "online" else None)
        case["times"] = {"subject": [], "baseline": []}
    once, per_policy = state_once(job, policies), state_per_policy(job, policies)
    engine = {"max_diff": max_abs_diff(once, per_policy), "outcome": once,
              "times": {"subject": [], "baseline": [], "state": []}
              | {f"kernel {p.method}": [] for p in policies}}
    for _ in range(repeat):
        for case in cases:
            for side in ("baseline", "subject"):
                case["times"][side].append(timed(case[side], case["calls"], PASSES[case["n"]]))
        engine["times"]["baseline"].append(timed(state_per_policy, [(job, policies)], 1))
        engine["times"]["subject"].append(timed(state_once, [(job, policies)], 1))
        engine["times"]["state"].append(timed(state_alone, [(job,)], 1))
        for p in policies:
            engine["times"][f"kernel {p.method}"].append(timed(kernel_alone, [(known, p)], 1))
        loads.append(os.getloadavg()[0])
    bad = [f"{c['kernel']} n={c['n']}: {c['max_diff']}" for c in cases if c["max_diff"] != 0.0]
    bad += [f"engine: {engine['max_diff']}"] if engine["max_diff"] != 0.0 else []
    if bad:
        raise SystemExit(f"the subject and its baseline differ: {'; '.join(bad)}")
    for case in (*cases, engine):
        case["median"] = {side: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
                          for side, v in case["times"].items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    return {"cases": cases, "engine": engine, "policies": [p.method for p in policies],
            "flagged": [p.n_flagged for p in policies], "repeat": repeat, "seed": seed, "commit": commit,
            "command": command or f"python -m benchmarks.replay_kernels --repeat {repeat}",
            "load_mean": statistics.mean(loads), "load_max": max(loads), "cores": os.cpu_count(),
            "when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "python": platform.python_version(),
            "n_draws": len(job.copies), "n_checks": len(job.checks), "n_estimates": len(known.state.cost)}


# ----------------------------------------------------------------------------- the report

KERNELS = {
    "curve": ("the curve", "`km_curve`", "`KaplanMeierFitter().fit`"),
    "quantile": ("the median", "`km_quantile`", "fit + `qth_survival_time`"),
    "at": (f"S at {READ_AT} times", "`km_at`", "fit + `survival_function_at_times`"),
    "online": ("tau_hat at a decision", "`online_threshold`", "`online_threshold`, lifelines' quantile"),
}


def _ms(x: float) -> str:
    return f"{x * 1e3:.3f}" if x < 1 else f"{x * 1e3:,.0f}"


def report(res: dict) -> str:
    rows = []
    for c in res["cases"]:
        what, subject, baseline = KERNELS[c["kernel"]]
        (bw, bc), (sw, sc) = c["median"]["baseline"], c["median"]["subject"]
        censored = f"{min(c['censored']):.0%}-{max(c['censored']):.0%}"
        if c["km_answered"] is not None:
            censored += f" running; KM answers {c['km_answered']}/{len(c['calls'])}"
        rows.append(f"| {what} | {c['n']:,} | {censored} | {baseline} | {_ms(bc)} | {subject} | {_ms(sc)} | "
                    f"**{bc / sc:.0f}x** | {bw / sw:.0f}x | {c['max_diff']:g} |")
    en = res["engine"]
    med = en["median"]
    (bw, bc), (sw, sc) = med["baseline"], med["subject"]
    budgets = ", ".join(f"{b:g}" for b in BUDGETS)
    outcome_rows = [f"| {name} | {flagged:,} | " + " | ".join(
        f"{jct:.4f} / {extra:.4f} / {copies:.1f}" for jct, extra, copies in en["outcome"][i]) + " |"
        for i, (name, flagged) in enumerate(zip(res["policies"], res["flagged"]))]
    kernels = [f"| the kernel: {name} under the {len(BUDGETS)} budgets, the state known | "
               f"{_ms(med[f'kernel {name}'][1])} | {_ms(med[f'kernel {name}'][0])} |" for name in res["policies"]]
    return "\n".join([
        SECTION,
        "",
        f"Written by `python -m benchmarks.replay_kernels` (`{res['command']}`; {res['when']}, commit "
        f"`{res['commit']}`, {res['cores']} cores, load average {res['load_mean']:.1f} (at most "
        f"{res['load_max']:.1f}) during the run, Python {res['python']}): medians of {res['repeat']} alternating "
        f"rounds, per call; the ratio is the baseline's time over the subject's, by CPU time (the steadier on a "
        f"shared machine) and by the wall clock. Every pair was checked to give the same numbers on the same "
        f"inputs (largest absolute difference: the last column).",
        "",
        "What it measures: two pieces of the replay that run for every job. (1) The "
        "Kaplan-Meier curve that tau_hat and a copy's lease are read from, in numpy with "
        "lifelines' arithmetic (`stragglers/prediction/statistics/threshold.py`), against lifelines' "
        "`KaplanMeierFitter` fitted and read the same way, on log-normal durations (fixed seed, "
        f"{INPUTS} inputs per size, 20-60% censored); and `online_threshold` (q = {Q}, what "
        "`copy_lease_seconds` asks at each decision) on a running job whose tasks started at different "
        "times, against the same function with lifelines' quantile swapped in (where the Kaplan-Meier "
        "median is not defined yet, both fall back on the same log-normal fit). (2) The replay engine "
        "(`stragglers/prediction/engine`) on one generated job under the budgets: what a budget reads at "
        "each check (`CheckState`) computed once per job against once per policy.",
        "",
        "| readout | durations | censored | baseline | baseline CPU (ms) | subject | subject CPU (ms) | "
        "ratio (CPU) | ratio (wall) | max abs diff |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"The engine on one generated job ({TASKS:,} tasks started over twice their median latency, "
        f"{SHARE_NOT_FINISHING:.0%} not finishing; {res['n_checks']} checks evenly spaced from its first task's "
        f"end to its last end, the durations re-estimated at {res['n_estimates']} of them; {res['n_draws']} copy "
        f"draws, one per seed of `RELAUNCH_SEEDS`): {len(res['policies'])} policies, the oracle and one from "
        f"flags (a task flagged at the first check at which it has run {FLAG_AFTER_MEDIANS:g} times the job's "
        f"median latency), each under the budgets {budgets} (`engine.caps.Budget`). Outcome, the same on both "
        f"sides, per budget: JCT reduction / extra machine share / copies.",
        "",
        "| policy | tasks flagged | " + " | ".join(f"budget {b:g}" for b in BUDGETS) + " |",
        "|---|---|" + "---|" * len(BUDGETS),
        *outcome_rows,
        "",
        "| what runs | CPU (ms) | wall (ms) |",
        "|---|---|---|",
        f"| baseline: the state per policy (a fresh `CopyJob` per policy: each run computes its `CheckState`) "
        f"| {_ms(bc)} | {_ms(bw)} |",
        f"| subject: the state once per job (`job.state`, read by every policy's run) | {_ms(sc)} | {_ms(sw)} |",
        f"| the state alone (`CheckState.of`) | {_ms(med['state'][1])} | {_ms(med['state'][0])} |",
        *kernels,
        "",
        f"**Once per job / per policy: {bc / sc:.1f}x less CPU time, {bw / sw:.1f}x by the wall clock** "
        f"(max abs difference of the outcomes: {en['max_diff']:g}).",
    ])


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.replay_kernels", description=__doc__.splitlines()[0],
                                epilog="A round takes about 5 s on an idle 2-core machine.")
    p.add_argument("--repeat", type=int, default=5, help="alternating rounds (medians; default %(default)s)")
    p.add_argument("--seed", type=int, default=SEED, help="the inputs' seed (default %(default)s)")
    p.add_argument("--write", type=Path, default=None, help=WRITE_HELP)
    a = p.parse_args()
    if a.repeat < 1:
        p.error("--repeat must be at least 1")
    command = " ".join(["python -m benchmarks.replay_kernels", f"--repeat {a.repeat}",
                        *([f"--seed {a.seed}"] if a.seed != SEED else []), *([f"--write {a.write}"] if a.write else [])])
    text = report(run(a.repeat, a.seed, command))
    publish_section(text, a.write, SECTION)


if __name__ == "__main__":
    main()
