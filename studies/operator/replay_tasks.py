"""Evaluate methods under the operator's protocol into a warehouse of their own (the replay's
inputs as the code that runs it builds them), then compare two such warehouses.

    python -m studies.operator.replay_tasks run WORK --trace synthetic|google_2011 [--url DIR] [--parts SPEC]
        [--synthetic-jobs N] [--methods a,b,...] [--workers 1] [--clock online|task_clock]
    python -m studies.operator.replay_tasks compare BEFORE_WORK AFTER_WORK --trace T [--out result.json]

``run`` builds WORK/warehouse.duckdb (fetching the trace into WORK/raw) and evaluates ``methods``
with the operator's settings (``OPERATOR``, every other setting at its default; ``--synthetic-jobs``: the
embedded trace generated with that many jobs, its seed the default's; ``--clock task_clock``
replays on the paper's task clock, to compare with code that had no other). ``compare`` reads
each warehouse's operator predictions and the tasks its replay saw (``operator_tasks``) and scores
each method the one way, through the replay engine (a copy per flag at the flag's time, a machine
always free, the engine's copy draws per job: a copy of a task that does not finish buys nothing and
runs until its original ends): mean JCT cut and extra machine time over jobs, copies per job,
copies of tasks that never finish, mean F1, decisions per job, tasks per job.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import duckdb
import numpy as np

from stragglers.prediction.evaluation.run import evaluate
from stragglers.settings.protocols import OPERATOR
from stragglers.settings import EvaluationSettings, SelectionSettings


def run(work: Path, trace: str, url: str | None, parts: str | None, methods: list[str], workers: int,
        clock: str = "online", synthetic_jobs: int | None = None) -> None:
    from stragglers.traces.fetch import SyntheticScale, fetch_trace
    from stragglers.warehouse.assemble import build_warehouse

    raw_root = work / "raw"
    if not list(raw_root.rglob("task_events")):
        fetch_trace(trace, raw_root, log=lambda _: None, **({"url": url} if url else {}),
                    **({"parts": parts} if parts else {}),
                    **({"scale": SyntheticScale(n_jobs=synthetic_jobs)} if synthetic_jobs else {}))
    raw = next(p for p in raw_root.rglob("task_events")).parent
    con = duckdb.connect(str(work / "warehouse.duckdb"))
    build_warehouse(con, raw, SelectionSettings(trace=trace))
    for m in methods:   # one call per method: a slow one does not hold the others back
        evaluate(con, trace, [m], EvaluationSettings(workers=workers, **(OPERATOR | {"decision_clock": clock})))
        print(f"{trace}: {m} evaluated", flush=True)


def scores(work: Path, trace: str) -> dict:
    from stragglers.prediction.engine.caps import Uncapped
    from stragglers.prediction.engine.jobs import copy_jobs
    from stragglers.prediction.engine.policies import from_flags
    from stragglers.prediction.engine.replay import outcomes

    con = duckdb.connect(str(work / "warehouse.duckdb"), read_only=True)
    has_all = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'operator_tasks'"
                          ).fetchone()[0] > 0
    if not has_all:
        raise SystemExit(f"{work / 'warehouse.duckdb'}: no table operator_tasks; the engine replays every task "
                         f"of a job: run 'run' with this checkout first")
    jobs = copy_jobs(con, trace)
    preds = con.execute("SELECT method, job_id, task_id, flagged_at_s FROM operator_predictions WHERE trace = ?",
                        [trace]).df()
    jm = con.execute("SELECT method, job_id, f1, n_checkpoints FROM operator_job_metrics WHERE trace = ?",
                     [trace]).df()
    out = {}
    for method, p in preds.groupby("method"):
        rows = []
        for j, g in p.groupby("job_id"):
            job = jobs[int(j)]
            f = g.set_index("task_id").flagged_at_s.reindex(job.task_ids).to_numpy(float)
            # a copy per flag at the flag's time, on a machine always free
            policy = from_flags(str(method), "as_run", f, np.unique(f[~np.isnan(f)]))
            o = outcomes(job, policy, [Uncapped()])[0]
            copied = ~np.isnan(f) & (f < job.end)
            rows.append((o.jct_reduction, o.extra_machine_share, o.copies,
                         int((copied & ~job.finished).sum()), len(f)))
        r = np.array(rows, dtype=float)
        m = jm[jm.method == method]
        out[method] = {"n_jobs": len(rows), "jct_cut": round(float(r[:, 0].mean()), 4),
                       "extra_machine": round(float(r[:, 1].mean()), 4),
                       "copies_per_job": round(float(r[:, 2].mean()), 1),
                       "copies_of_unfinished_per_job": round(float(r[:, 3].mean()), 1),
                       "tasks_per_job": round(float(r[:, 4].mean()), 1),
                       "f1": round(float(m.f1.mean()), 3), "decisions_per_job": round(float(m.n_checkpoints.mean()), 1)}
    return {"tasks_table": "operator_tasks", "methods": out}


def markdown(before: dict, after: dict) -> str:
    def pct(v):
        return "" if v is None else f"{v * 100:.1f}%"

    lines = ["| method | jobs | tasks / job | JCT cut | extra machine time | copies / job | copies of tasks that never finish / job | F1 | decisions / job |",
             "|---|---|---|---|---|---|---|---|---|"]
    for m in sorted(after["methods"], key=lambda m: -after["methods"][m]["jct_cut"]):
        a, b = before["methods"].get(m, {}), after["methods"][m]
        lines.append(f"| {m} | {a.get('n_jobs')} -> {b['n_jobs']} | {a.get('tasks_per_job')} -> {b['tasks_per_job']} | "
                     f"{pct(a.get('jct_cut'))} -> {pct(b['jct_cut'])} | {pct(a.get('extra_machine'))} -> "
                     f"{pct(b['extra_machine'])} | {a.get('copies_per_job')} -> {b['copies_per_job']} | "
                     f"{a.get('copies_of_unfinished_per_job')} -> {b['copies_of_unfinished_per_job']} | "
                     f"{a.get('f1')} -> {b['f1']} | {a.get('decisions_per_job')} -> {b['decisions_per_job']} |")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m studies.operator.replay_tasks", description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("run", "compare"))
    p.add_argument("work", nargs="+")
    p.add_argument("--trace", default="synthetic")
    p.add_argument("--url")
    p.add_argument("--parts")
    p.add_argument("--synthetic-jobs", type=int, help="the embedded trace's jobs (generated; default: the default's)")
    p.add_argument("--methods", default="flag_all,km_survival,spark_speculation,spark4_speculation,wait_for_tau,oracle")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--clock", default="online", choices=("online", "task_clock"))
    p.add_argument("--out")
    a = p.parse_args()
    if a.what == "run":
        work = Path(a.work[0])
        work.mkdir(parents=True, exist_ok=True)
        run(work, a.trace, a.url, a.parts, a.methods.split(","), a.workers, a.clock, a.synthetic_jobs)
        return 0
    before, after = (scores(Path(w), a.trace) for w in a.work)
    result = {"trace": a.trace, "before": before, "after": after}
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=1))
    print(markdown(before, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
