"""What the legacy operator grid's look-ahead did, and what the online clock costs.

    python -m studies.operator.operator_clock WORK_DIR [--trace synthetic|google_2011] [--url DIR]
        [--parts SPEC] [--methods a,b,...|all] [--workers 2] [--out result.json]

Builds the warehouse of the trace once (the paper's features and the operator's clock tables:
their build time is reported separately), then evaluates ``methods`` under the operator's protocol
(``NURD_PROTOCOL=operator``) twice in the same run: on the legacy grid (``decision_clock=legacy_grid``,
cut from the true tau, features repeated past it) and on the online clock (the default). Per clock
and method: the JCT cut with a speculative copy per flag (a machine always free; mean over jobs and
10 seeds, stragglers.prediction.copies.completion_tables.speculation_table), the extra machine time (share of the
job's machine time), copies per job, mean F1 over jobs and decisions per job; and each clock's
evaluation wall time as a ratio online / legacy, measured in this one run (``--repeat N``
alternates the clocks N times and keeps each one's fastest run: the machine is shared, compare
ratios, not seconds).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import duckdb

from stragglers.prediction.engine.draws import RELAUNCH_SEEDS
from stragglers.prediction.copies.completion_tables import speculation_table
from stragglers.prediction.replay.workers import ProgressLog
from stragglers.prediction.evaluation.run import evaluate
from stragglers.prediction.methods import METHODS
from stragglers.settings.protocols import OPERATOR
from stragglers.settings import EvaluationSettings, SelectionSettings
from stragglers.traces.fetch import fetch_trace
from stragglers.warehouse.assemble import build_warehouse
from stragglers.warehouse.build import step_tables
from stragglers.warehouse.freshness import tables_current

CLOCKS = ("legacy_grid", "online")


def build(work: Path, trace: str, url: str | None, parts: str | None, finished_percent: int | None = None
          ) -> tuple[duckdb.DuckDBPyConnection, dict]:
    raw_root = work / "raw"
    if not list(raw_root.rglob("task_events")):
        kw = {"url": url} if url else {}
        if parts:
            kw["parts"] = parts
        fetch_trace(trace, raw_root, log=lambda _: None, **kw)
    raw = next(p for p in raw_root.rglob("task_events")).parent
    settings = SelectionSettings(trace=trace, **({} if finished_percent is None
                                                 else {"clock_finished_percent": finished_percent}))
    con = duckdb.connect(str(work / "warehouse.duckdb"))
    if tables_current(con, step_tables("checkpoint_features", settings), settings):
        return con, {"features_build_s": None, "rows": "built by an earlier run"}
    seconds: dict[str, float] = {}
    counts = build_warehouse(con, raw, settings, seconds=seconds)["features"]
    return con, {"features_build_s": round(seconds["features"], 1), "rows": counts}


def measure(con: duckdb.DuckDBPyConnection, trace: str, methods: list[str], workers: int, repeat: int = 1) -> dict:
    """Each clock ``repeat`` times, alternating (legacy, online, legacy, ...): the load of a shared
    machine drifts, so each clock's wall time is its fastest run; the results are deterministic."""
    tasks = con.execute("SELECT trace, job_id, task_id, latency_s FROM tasks WHERE trace = ?", [trace]).df()
    out = {}
    walls: dict[str, list[float]] = {c: [] for c in CLOCKS}
    for clock in [c for _ in range(repeat) for c in CLOCKS]:
        s = EvaluationSettings(workers=workers, **(dict(OPERATOR) | {"decision_clock": clock}))
        started = time.perf_counter()
        outcome = evaluate(con, trace, methods, s, progress=ProgressLog(lambda m: print(m, flush=True), methods, every_s=60))
        wall = time.perf_counter() - started
        jm = outcome.frames["job_metrics"]
        preds = con.execute("SELECT trace, method, job_id, task_id, flagged_at_s FROM operator_predictions "
                            "WHERE trace = ?", [trace]).df()
        spec = speculation_table(tasks[tasks.job_id.isin(jm.job_id.unique())], preds, None, machines=[],
                                 seeds=RELAUNCH_SEEDS)
        spec = spec[spec.algorithm == "unlimited"].set_index("method")
        per_method = {}
        for method, g in jm.groupby("method"):
            row = spec.loc[method] if method in spec.index else None
            per_method[method] = {
                "jct_cut": None if row is None else round(float(row.reduction_mean), 4),
                "extra_machine": None if row is None else round(float(row.extra_machine_share), 4),
                "copies_per_job": None if row is None else round(float(row.n_copies_per_job), 1),
                "f1": round(float(g.f1.mean()), 3), "n_jobs": int(len(g)),
                "decisions_per_job": round(float(g.n_checkpoints.mean()), 1),
                "replay_s": round(float(g.seconds.sum()), 1)}
        walls[clock].append(round(wall, 1))
        out[clock] = {"wall_s": min(walls[clock]), "walls_s": walls[clock], "n_jobs": outcome.n_jobs,
                      "methods": per_method}
        print(f"{clock}: {outcome.n_jobs} jobs, {wall:.0f} s", flush=True)
    out["ratio_wall_online_over_legacy"] = round(out["online"]["wall_s"] / out["legacy_grid"]["wall_s"], 2)
    return out


def markdown(result: dict) -> str:
    """The before/after table (one row per method) and the cost line, as in docs/EVALUATION.md."""
    def pct(v):
        return "" if v is None else f"{v * 100:.1f}%"

    old, new = result["legacy_grid"]["methods"], result["online"]["methods"]
    lines = ["| method | JCT cut: legacy -> online | extra machine time | copies / job | F1 | decisions / job |",
             "|---|---|---|---|---|---|"]
    for m in sorted(new, key=lambda m: -(new[m]["jct_cut"] or 0)):
        a, b = old.get(m, {}), new[m]
        lines.append(f"| {m} | {pct(a.get('jct_cut'))} -> {pct(b['jct_cut'])} | {pct(a.get('extra_machine'))} -> "
                     f"{pct(b['extra_machine'])} | {a.get('copies_per_job')} -> {b['copies_per_job']} | "
                     f"{a.get('f1')} -> {b['f1']} | {a.get('decisions_per_job')} -> {b['decisions_per_job']} |")
    lines.append(f"\nEvaluation wall time, online / legacy (one run): {result['ratio_wall_online_over_legacy']}x "
                 f"({result['legacy_grid']['wall_s']} s -> {result['online']['wall_s']} s)")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m studies.operator.operator_clock", description=__doc__.splitlines()[0])
    p.add_argument("work")
    p.add_argument("--trace", default="synthetic")
    p.add_argument("--url")
    p.add_argument("--parts")
    p.add_argument("--methods", default="all")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--clock-finished-percent", type=int, help="the online clock's count step (default: the setting's)")
    p.add_argument("--repeat", type=int, default=1, help="runs of each clock, alternating (the fastest counts)")
    p.add_argument("--out")
    a = p.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    methods = list(METHODS) if a.methods == "all" else a.methods.split(",")
    con, built = build(work, a.trace, a.url, a.parts, a.clock_finished_percent)
    print(json.dumps(built), flush=True)
    result = {"trace": a.trace, "parts": a.parts, "methods": methods, "build": built,
              "clock_finished_percent": a.clock_finished_percent,
              **measure(con, a.trace, methods, a.workers, a.repeat)}
    text = json.dumps(result, indent=1)
    if a.out:
        Path(a.out).write_text(text)
    print(text)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
