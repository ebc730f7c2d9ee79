"""The replay of Spark's speculation rule held to the copies a real Spark made: stage the logs of
``python -m tests.spark_cluster --out DIR`` (DIR/eventlogs, and DIR/manifest.json for each
application's settings and Spark's own copies) as ``nurd-spark advise`` does, replay each
application's rule with its own settings through the engine (stragglers/prediction/copies/spark_copies.py
``replay_flags``: each stage attempt a job, checked every spark.speculation.interval from its
submission, a copy on a free core of another host once no task is pending), and print, per copy, when
the replay flags the task and where and when it would start the copy, beside Spark's launch (ms from
the stage's submission). ``--doc`` writes the table into docs/EVALUATION.md between its markers.

    .venv/bin/python -m studies.spark.spark_agreement DIR [--doc docs/EVALUATION.md]

Run it from the project root (``-m``: the ``studies`` package).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import duckdb

from stragglers.prediction.engine.spark_rule import SpeculationRule, duration, rule_from_conf
from stragglers.prediction.copies.spark_copies import Replayed, replay_flags, scheduling_delay_s
from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_selection
from stragglers.warehouse.runner import build_table
from stragglers.warehouse.spark_staging import TRACE, stage_spark

DOC_START = "<!-- measured: studies/spark/spark_agreement.py DIR --doc docs/EVALUATION.md -->"
DOC_END = "<!-- end of measured agreement -->"
#: the cluster's stages have 8 tasks (the pipeline's default selects stages of 100 or more)
MIN_TASKS = 2
#: the tables the engine reads, after the selection (stragglers/advice/spark.py ``outcomes``)
ENGINE_TABLES = ("job_checkpoints", "operator_tasks", "operator_checkpoints")


def _settings(rule: SpeculationRule) -> str:
    return f"{rule.words()}, interval {duration(rule.interval_s)}"


def replayed_copies(eventlog_dir: Path, rules: dict[str, SpeculationRule]) -> tuple[list[Replayed], float, list[int]]:
    """(every task the rules flag, with its copy as the engine places it; Spark's scheduling delay (s);
    the selected stage attempts' task counts) for the logs under ``eventlog_dir``."""
    con = duckdb.connect()
    try:
        stage_spark(con, eventlog_dir, min_tasks=MIN_TASKS)
        selection = SelectionSettings(trace=TRACE, min_tasks=MIN_TASKS)
        build_selection(con, selection)
        for table in ENGINE_TABLES:
            build_table(con, table, selection)
        replayed = replay_flags(con, TRACE, rules)
        sizes = [int(n) for (n,) in con.execute("SELECT n_tasks FROM jobs WHERE trace = ?", [TRACE]).fetchall()]
        return replayed, scheduling_delay_s(con), sizes
    finally:
        con.close()


def agreement_table(root: Path) -> str:
    manifest = json.loads((root / "manifest.json").read_text())
    apps = [a for a in manifest["apps"] if not a["killed"]]
    rules = {a["app_id"]: rule_from_conf(a["settings"]) for a in apps}
    replayed_list, delay, sizes = replayed_copies(root / "eventlogs", rules)
    replayed = {(r.app_id, r.stage_id, r.stage_attempt, r.task_index): r for r in replayed_list}
    spark = {(c["app_id"], c["stage_id"], c["stage_attempt"], c["task_index"]): c
             for a in apps for c in a["speculative_copies"]}
    copied = {k for k, r in replayed.items() if r.copy_s is not None}
    lines = [f"Spark {manifest['spark_version']}, {len(apps)} applications, {len(sizes)} stage attempts of "
             f"{'/'.join(sorted({str(n) for n in sizes}))} tasks; settings (each application's own, replayed as "
             f"they are): {'; '.join(sorted({_settings(r) for r in rules.values()}))}, efficiency check off. "
             f"Spark copied {len(spark)} tasks; the replay flags {len(replayed)}, would copy {len(copied)}: "
             f"{len(copied & set(spark))} of Spark's, {len(copied - set(spark))} others, {len(set(spark) - copied)} "
             f"missed; the {len(replayed) - len(copied)} flagged but not copied found no free core of another host "
             f"before they ended (Spark did not copy them either). Spark's scheduling delay (the longest gap, "
             f"either way, on one executor, between a task's recorded end and the next launch while tasks were "
             f"pending): {1000 * delay:.0f} ms.",
             "",
             "| application | stage | task | replay flags (ms) | replay's copy (ms, host) | Spark's copy (ms, host) "
             "| Spark - replay (ms) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for key in sorted(set(spark) | set(replayed)):
        r, c = replayed.get(key), spark.get(key)
        launch = c and c["copy_launch"] - c["stage_submitted"]
        replay_copy = r.copy_s * 1000 if r and r.copy_s is not None else None
        lines.append(
            f"| {key[0]} | {key[1]}.{key[2]} | {key[3]} | " + (f"{1000 * r.flagged_s:.0f}" if r else "none") + " | "
            + (f"{replay_copy:.0f}, {r.copy_host}" if replay_copy is not None else "none")
            + " | " + (f"{launch:.0f}, {c['copy_host']}" if c else "none")
            + " | " + (f"{launch - replay_copy:+.0f}" if c and replay_copy is not None else "") + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m studies.spark.spark_agreement",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="the directory python -m tests.spark_cluster --out wrote")
    parser.add_argument("--doc", type=Path, help="write the table into this doc between its markers")
    args = parser.parse_args(argv)
    if not (args.root / "manifest.json").is_file():
        parser.error(f"{args.root}: no manifest.json (write one with: python -m tests.spark_cluster --out {args.root})")
    table = agreement_table(args.root)
    print(table)
    if args.doc:
        text = args.doc.read_text()
        start, end = text.index(DOC_START) + len(DOC_START), text.index(DOC_END)
        args.doc.write_text(text[:start] + "\n" + table + "\n" + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
