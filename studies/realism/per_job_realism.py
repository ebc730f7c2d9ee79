"""Per-job structure of evictions, waits and kills: the real excerpt beside generated traces
(docs/SYNTHETIC_TRACE.md, "Generator 3"). Reads the raw task_events of each trace directory.

    python -m studies.realism.per_job_realism [--seeds 2011,7,13] [--realdata $NURD_REALDATA_DIR]

Generates the embedded Google trace for each seed into a temporary directory (current
generator), then prints one row per statistic: real excerpt, then each seed.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from stragglers.traces.synth import generate_google

from studies.realism.measure_real_excerpt import load_events

STATISTICS = {
    "jobs (>= 100 finished tasks, SUBMIT in window)": "SELECT count(DISTINCT job_id) FROM fj",
    "finished tasks that were evicted": "SELECT avg((ev > 0)::INT) FROM fj",
    "evicted in-window tasks that finish": "SELECT avg((fe = 4)::INT) FROM t SEMI JOIN sel USING (job_id) WHERE sch > 0 AND ev > 0",
    "stragglers (run latency > p90) evicted": "SELECT avg((ev > 0)::INT) FILTER (run > p90r) FROM fj",
    "end-to-end stragglers through their wait alone": "SELECT avg((run <= p90r)::INT) FILTER (e2e > p90e) FROM fj",
    "within-job p90/p50 of SUBMIT -> SCHEDULE (median job)": "SELECT median(p90w / greatest(p50w, 0.1)) FROM (SELECT DISTINCT job_id, p90w, p50w FROM fj)",
    "killed jobs: share of in-window tasks finished, 25 / 50 / 75 % points": """SELECT
        list_transform(quantile_cont(s, [0.25, 0.5, 0.75]), x -> round(x, 2))::VARCHAR FROM (SELECT avg((fe = 4)::INT) s
        FROM t SEMI JOIN sel USING (job_id) SEMI JOIN killed_in_window USING (job_id) WHERE sch > 0
        GROUP BY job_id HAVING count(*) >= 100)""",
}


def measure(root: Path) -> dict:
    con = load_events(str(root))
    con.execute("""CREATE TABLE fj AS SELECT * FROM (SELECT f.*, quantile_cont(run, 0.9) OVER w AS p90r,
            quantile_cont(e2e, 0.9) OVER w AS p90e, quantile_cont(wait, 0.5) OVER w AS p50w,
            quantile_cont(wait, 0.9) OVER w AS p90w, count(*) OVER w AS n
        FROM (SELECT job_id, task_index, ev, (fin - sch) / 1e6 AS run, (fin - sub) / 1e6 AS e2e, (sch - sub) / 1e6 AS wait
              FROM t SEMI JOIN sel USING (job_id) WHERE fe = 4 AND sch > 0 AND sub > 0) f
        WINDOW w AS (PARTITION BY job_id)) WHERE n >= 100""")
    return {k: con.execute(q).fetchone()[0] for k, q in STATISTICS.items()}


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.realism.per_job_realism")
    ap.add_argument("--seeds", default="2011,7,13")
    ap.add_argument("--realdata", default=os.environ.get("NURD_REALDATA_DIR", "../shared/realdata"))
    args = ap.parse_args()
    cols = {"real excerpt": measure(Path(args.realdata) / "google_2011")}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds.split(","):
            out = Path(tmp) / seed
            generate_google(out, seed=int(seed))
            cols[f"seed {seed}"] = measure(out)
    print("| statistic | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for k in STATISTICS:
        vals = [c[k] for c in cols.values()]
        fmt = (lambda v: f"{v:.0f}") if k.startswith("jobs") else (
            (lambda v: f"{v:.2f}") if "p90/p50" in k else (lambda v: f"{100 * v:.2f} %"))
        print(f"| {k} | " + " | ".join("-" if v is None else (v if isinstance(v, str) else fmt(v)) for v in vals) + " |")


if __name__ == "__main__":
    main()
