"""One side of benchmarks/engine.py: the operator's evaluation of some methods on a copy of a
warehouse, timed, by whichever ``stragglers`` package comes first on the path (the checkout under
test, or a baseline's worktree put first by PYTHONPATH). Prints one JSON line per method.

    python benchmarks/engine_side.py WAREHOUSE WORKDIR METHOD[,METHOD...]

Only names that exist in every version compared are used (``evaluate``, ``OPERATOR``,
``EvaluationSettings``).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path


def main(warehouse: str, workdir: str, methods: str) -> None:
    import duckdb

    import stragglers
    from stragglers.prediction.evaluation.run import evaluate
    from stragglers.settings.protocols import OPERATOR
    from stragglers.settings import EvaluationSettings

    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    db = work / "warehouse.duckdb"
    shutil.copyfile(warehouse, db)
    con = duckdb.connect(str(db))
    settings = EvaluationSettings(workers=1, **OPERATOR)
    for method in methods.split(","):
        wall, cpu = time.perf_counter(), time.process_time()
        out = evaluate(con, "synthetic", [method], settings)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rows = {t: int(len(df)) for t, df in out.frames.items() if t in ("sweep_outcomes", "capped_outcomes")
                and df is not None}
        print(json.dumps({"method": method, "wall": wall, "cpu": cpu, "jobs": out.n_jobs, "rows": rows,
                          "package": str(Path(stragglers.__file__).parent)}), flush=True)
    con.close()


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("warehouse")
    p.add_argument("workdir")
    p.add_argument("methods", help="comma-separated method names")
    a = p.parse_args()
    main(a.warehouse, a.workdir, a.methods)
