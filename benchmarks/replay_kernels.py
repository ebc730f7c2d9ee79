"""Replay kernels: the Kaplan-Meier curve in numpy vs lifelines, and the capped oracle's per-job work, in ONE run.

    python benchmarks/replay_kernels.py [--repeat 5] [--write docs/BENCHMARKS.md]

Two pieces of the replay that run at every decision of every job, each beside its baseline,
alternating, ``--repeat`` rounds (medians reported):

(1) The Kaplan-Meier curve (``stragglers.prediction.threshold``: ``km_curve``, ``km_quantile``,
    ``km_at``, numpy with lifelines' arithmetic) against lifelines' ``KaplanMeierFitter`` fitted and
    read the same way (``qth_survival_time``, ``survival_function_at_times``), on jobs of 100, 1,000
    and 10,000 durations (log-normal, 20-60% censored, fixed seed). Also ``online_threshold`` (what
    the replay asks per decision, q = 0.5 as ``copy_lease_seconds`` does) with its Kaplan-Meier
    quantile from the numpy curve against the same function with lifelines' quantile swapped in (the
    function as it was with lifelines), on the running job at a decision (tasks started at
    different times, so censorings fall among the events and the Kaplan-Meier branch runs).
(2) The capped oracle (``speculation.capped_outcome`` with ``ranked_by_truth``) on one generated job
    of 1,000 tasks, 200 decisions, one copy draw per seed of ``completion.RELAUNCH_SEEDS``, at the
    report's headline budget: the copies' leases (the median known at each decision) and the machine
    time so far computed once per job (``capped_outcome``) against recomputed for every draw
    (``speculate_capped`` called per draw without them).

Every pair is checked to give the same numbers (the largest absolute difference is printed; the
script stops if it is not 0). Wall clock and CPU time (this process) per call; the ratio is the
baseline's over the subject's. With ``--write`` the result replaces the section "Replay kernels:
the Kaplan-Meier curve and the capped oracle" of that file.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from stragglers.prediction import threshold  # noqa: E402
from stragglers.prediction.completion import RELAUNCH_SEEDS  # noqa: E402
from stragglers.prediction.speculation import (  # noqa: E402
    capped_outcome, copy_draws, ranked_by_truth, speculate_capped, task_ends,
)
from stragglers.prediction.sweep import HEADLINE_BUDGET, ORACLE_DECISIONS  # noqa: E402

SECTION = "## Replay kernels: the Kaplan-Meier curve and the capped oracle"
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


def capped_job(rng: np.random.Generator) -> dict:
    """One job as the capped oracle replays it (``sweep.capped_rows``): latencies, starts on the job's
    wall clock, the tasks that finish, the decisions (``ORACLE_DECISIONS`` evenly spaced from the first
    decision, here the job's median task end, to its end) and one copy draw per relaunch seed."""
    y = rng.lognormal(4.0, 1.0, TASKS)
    start = rng.uniform(0.0, 2.0 * float(np.median(y)), TASKS)
    finished = rng.random(TASKS) >= SHARE_NOT_FINISHING
    end = task_ends(y, start)
    decisions = np.linspace(float(np.median(end)), float(end.max()), ORACLE_DECISIONS + 1)[:-1]
    draws = copy_draws(y, "benchmark", 0, RELAUNCH_SEEDS, finished=finished)
    return {"y": y, "start": start, "finished": finished, "decisions": decisions, "draws": draws}


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


def capped_once(job: dict, cap: float) -> tuple[float, float, float]:
    ranked = ranked_by_truth(job["y"], job["finished"], job["start"])
    return capped_outcome(job["y"], job["decisions"], ranked, job["draws"], cap, None, job["start"])


def capped_per_draw(job: dict, cap: float) -> tuple[float, float, float]:
    """``capped_outcome``'s sums with ``speculate_capped`` left to compute the leases
    and the machine time so far itself, once per draw."""
    y, st = job["y"], job["start"]
    ranked = ranked_by_truth(y, job["finished"], st)
    original, work = float(task_ends(y, st).max()), float(y.sum())
    red = extra = copies = 0.0
    for r in job["draws"]:
        new, ex, c = speculate_capped(y, job["decisions"], ranked, r, cap, None, st)
        red += (original - new) / original
        extra += ex / work
        copies += c
    n = len(job["draws"])
    return red / n, extra / n, copies / n


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
    job = capped_job(np.random.default_rng([seed, TASKS]))
    cap = HEADLINE_BUDGET
    loads = [os.getloadavg()[0]]
    for case in cases:             # the answers compared (and imports, caches warmed) before any timing
        case["max_diff"] = max(case["diff"](case["subject"](*a), case["baseline"](*a)) for a in case["calls"])
        case["km_answered"] = (sum(math.isfinite(threshold.km_quantile(*threshold._observations(*a), Q))
                                   for a in case["calls"]) if case["kernel"] == "online" else None)
        case["times"] = {"subject": [], "baseline": []}
    once, per_draw = capped_once(job, cap), capped_per_draw(job, cap)
    capped = {"max_diff": max_abs_diff(once, per_draw), "outcome": once, "times": {"subject": [], "baseline": []}}
    for _ in range(repeat):
        for case in cases:
            for side in ("baseline", "subject"):
                case["times"][side].append(timed(case[side], case["calls"], PASSES[case["n"]]))
        capped["times"]["baseline"].append(timed(capped_per_draw, [(job, cap)], 1))
        capped["times"]["subject"].append(timed(capped_once, [(job, cap)], 1))
        loads.append(os.getloadavg()[0])
    bad = [f"{c['kernel']} n={c['n']}: {c['max_diff']}" for c in cases if c["max_diff"] != 0.0]
    bad += [f"capped: {capped['max_diff']}"] if capped["max_diff"] != 0.0 else []
    if bad:
        raise SystemExit(f"the subject and its baseline differ: {'; '.join(bad)}")
    for case in (*cases, capped):
        case["median"] = {side: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
                          for side, v in case["times"].items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    return {"cases": cases, "capped": capped, "cap": cap, "repeat": repeat, "seed": seed, "commit": commit,
            "command": command or f"python benchmarks/replay_kernels.py --repeat {repeat}",
            "load_mean": statistics.mean(loads), "load_max": max(loads), "cores": os.cpu_count(),
            "when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "python": platform.python_version(),
            "n_draws": len(job["draws"]), "n_decisions": len(job["decisions"])}


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
    cp = res["capped"]
    (bw, bc), (sw, sc) = cp["median"]["baseline"], cp["median"]["subject"]
    red, extra, copies = cp["outcome"]
    return "\n".join([
        SECTION,
        "",
        f"Written by `benchmarks/replay_kernels.py` (`{res['command']}`; {res['when']}, commit `{res['commit']}`, "
        f"{res['cores']} cores, load average {res['load_mean']:.1f} (at most {res['load_max']:.1f}) during the "
        f"run, Python {res['python']}): medians of {res['repeat']} alternating rounds, per call; the ratio is the "
        f"baseline's time over the subject's, by CPU time (the steadier on a shared machine) and by the wall "
        f"clock. Every pair was checked to give the same numbers on the same inputs (largest absolute "
        f"difference: the last column).",
        "",
        "What it measures: two pieces of the replay that run at every decision of every job. (1) The "
        "Kaplan-Meier curve that tau_hat and a copy's lease are read from, in numpy with "
        "lifelines' arithmetic (`stragglers/prediction/threshold.py`), against lifelines' "
        "`KaplanMeierFitter` fitted and read the same way, on log-normal durations (fixed seed, "
        f"{INPUTS} inputs per size, 20-60% censored); and `online_threshold` (q = {Q}, what "
        "`copy_lease_seconds` asks at each decision) on a running job whose tasks started at different "
        "times, against the same function with lifelines' quantile swapped in (where the Kaplan-Meier "
        "median is not defined yet, both fall back on the same log-normal fit). (2) The capped oracle "
        "(`capped_outcome` with `ranked_by_truth`) on one generated job.",
        "",
        "| readout | durations | censored | baseline | baseline CPU (ms) | subject | subject CPU (ms) | "
        "ratio (CPU) | ratio (wall) | max abs diff |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"The capped oracle on one generated job ({TASKS:,} tasks started over twice their median latency, "
        f"{SHARE_NOT_FINISHING:.0%} not finishing; {res['n_decisions']} decisions from its median task end to its "
        f"end; {res['n_draws']} copy draws, one per seed of `RELAUNCH_SEEDS`; budget {res['cap']:g}, the "
        f"report's headline). Outcome, the same on both sides: JCT reduction {red:.4f}, extra machine share "
        f"{extra:.4f}, {copies:.1f} copies.",
        "",
        "| side | what runs | CPU (ms) | wall (ms) |",
        "|---|---|---|---|",
        f"| baseline: per draw | `speculate_capped` per draw without `lease` / `machine_so_far`: each draw "
        f"recomputes the {res['n_decisions']} leases (`online_threshold`) and the machine "
        f"time so far | {_ms(bc)} | {_ms(bw)} |",
        f"| subject: once per job | `capped_outcome`: both computed once, passed to every draw | {_ms(sc)} | "
        f"{_ms(sw)} |",
        "",
        f"**Once per job / per draw: {bc / sc:.1f}x less CPU time, {bw / sw:.1f}x by the wall clock** "
        f"(max abs difference of the outcome: {cp['max_diff']:g}).",
    ])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                epilog="A round takes about 5 s on an idle 2-core machine.")
    p.add_argument("--repeat", type=int, default=5, help="alternating rounds (medians; default %(default)s)")
    p.add_argument("--seed", type=int, default=SEED, help="the inputs' seed (default %(default)s)")
    p.add_argument("--write", type=Path, default=None, help="the markdown file whose section to replace")
    a = p.parse_args()
    if a.repeat < 1:
        p.error("--repeat must be at least 1")
    command = " ".join(["python benchmarks/replay_kernels.py", f"--repeat {a.repeat}",
                        *([f"--seed {a.seed}"] if a.seed != SEED else []), *([f"--write {a.write}"] if a.write else [])])
    text = report(run(a.repeat, a.seed, command))
    print(text)
    if a.write:
        from benchmarks.spark_read import write_section
        write_section(a.write, text, SECTION)


if __name__ == "__main__":
    main()
