"""The budget table (matched on earlier jobs, every job scored, no cap) of one warehouse, computed by
the code of one checkout: the before/after of a change to the operator's replay, each side by the
code that made its sweep.

    python -m studies.operator.replay_budgets CODE_ROOT WAREHOUSE OUT.csv [--n-boot 200] [--seed 0]
    python -m studies.operator.replay_budgets --markdown BEFORE.csv AFTER.csv

CODE_ROOT is a checkout (``git worktree add DIR COMMIT``) whose ``stragglers`` package computes the
table, in a child process with CODE_ROOT first on its path (PYTHONPATH; the child runs this file by
path, so that the project root is not first); WAREHOUSE one that ``replay_tasks run`` made with that
code. Every job with earlier jobs is scored (none set aside to choose), as code without the
pre-named split scored them.
``--markdown`` prints both tables side by side: per method and budget, JCT cut and extra machine
time, before -> after.
"""

from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
from pathlib import Path

#: the hidden first argument of the child that computes a table by a checkout's code
CHILD = "--table-by-the-checkout-first-on-the-path"


def table(root: str, warehouse: str, out: str, n_boot: int, seed: int) -> None:
    """The table by the code of ``root``: this file run by path in a child process, ``root`` first on
    its path; the child names the package it imported, checked to be ``root``'s."""
    env = dict(os.environ, PYTHONPATH=str(Path(root).resolve()))
    done = subprocess.run([sys.executable, __file__, CHILD, warehouse, out, str(n_boot), str(seed)], env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{root}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    # its last line: "OUT: N rows by <the sweep module it imported>"
    print(done.stdout, end="")
    used = Path(done.stdout.strip().splitlines()[-1].rsplit(" by ", 1)[1]).resolve()
    if not used.is_relative_to(Path(root).resolve()):
        raise SystemExit(f"the table meant to be computed by {root} was computed by {used}")


def table_here(warehouse: str, out: str, n_boot: int, seed: int) -> None:
    """The table by whichever ``stragglers`` comes first on this process's path (the child of ``table``)."""
    import duckdb

    from stragglers.prediction.verdicts import sweep
    from stragglers.prediction.methods import FREE_RULES
    from stragglers.settings import EvaluationSettings

    con = duckdb.connect(warehouse, read_only=True)
    outcomes = con.table("operator_sweep_outcomes").order("ALL").df()
    traces = sorted(outcomes["trace"].unique())
    min_jobs = EvaluationSettings().history_min_jobs   # the checkout's own default
    if "choosing" in inspect.signature(sweep.budget_table).parameters:
        from stragglers.prediction.methods import is_learned

        earlier, _ = sweep.earlier_by_trace(con, traces)
        t = sweep.budget_table(outcomes, earlier, FREE_RULES, min_jobs, n_boot=n_boot, seed=seed,
                               choosing={tr: frozenset() for tr in traces}, learned=is_learned)
    else:
        t = sweep.budget_table(outcomes, sweep.earlier_by_trace(con, traces), FREE_RULES, min_jobs,
                               n_boot=n_boot, seed=seed)
    t.to_csv(out, index=False)
    print(f"{out}: {len(t)} rows by {sweep.__file__}")


def markdown(before: str, after: str) -> str:
    import pandas as pd

    b, a = pd.read_csv(before), pd.read_csv(after)
    m = b.merge(a, on=["trace", "method", "budget"], suffixes=("_b", "_a"))
    budgets = sorted(m["budget"].unique())
    lines = ["| method | " + " | ".join(f"{x * 100:g}%" for x in budgets) + " |", "|---|" + "---|" * len(budgets)]
    key = m[m["budget"] == budgets[-1]].sort_values("jct_reduction_a", ascending=False)["method"]
    for method in key:
        r = m[m["method"] == method].set_index("budget")
        lines.append(f"| {method} | " + " | ".join(
            f"{r.loc[x, 'jct_reduction_b'] * 100:.1f} / {r.loc[x, 'extra_machine_share_b'] * 100:.2f} -> "
            f"{r.loc[x, 'jct_reduction_a'] * 100:.1f} / {r.loc[x, 'extra_machine_share_a'] * 100:.2f}"
            for x in budgets) + " |")
    return "\n".join(lines)


def main() -> int:
    if sys.argv[1:2] == [CHILD]:
        warehouse, out, n_boot, seed = sys.argv[2:]
        table_here(warehouse, out, int(n_boot), int(seed))
        return 0
    p = argparse.ArgumentParser(prog="python -m studies.operator.replay_budgets",
                                description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="+")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--n-boot", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.markdown:
        print(markdown(*a.paths))
    else:
        table(*a.paths, a.n_boot, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
