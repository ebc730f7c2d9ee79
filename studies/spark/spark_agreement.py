"""The replay of Spark's speculation rule held to the copies a real Spark made: stage the logs of
``python -m tests.spark_cluster --out DIR`` (DIR/eventlogs, and DIR/manifest.json for each
application's settings and Spark's own copies), replay each application's rule with its own settings,
and print, per copy, when the replay flags the task and where and when it would start the copy,
beside Spark's launch (ms from the stage's submission). ``--doc`` writes the table into
docs/EVALUATION.md between its markers.

    .venv/bin/python studies/spark/spark_agreement.py DIR [--doc docs/EVALUATION.md]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import duckdb

from stragglers.prediction import spark_speculation as sp
from stragglers.warehouse.spark_staging import stage_spark

DOC_START = "<!-- measured: studies/spark/spark_agreement.py DIR --doc docs/EVALUATION.md -->"
DOC_END = "<!-- end of measured agreement -->"


def _settings(rule: sp.SpeculationRule) -> str:
    return (f"quantile {rule.quantile:g}, multiplier {rule.multiplier:g}, minTaskRuntime "
            f"{rule.min_task_runtime_ms:g}ms, interval {rule.interval_ms:g}ms")


def agreement_table(root: Path) -> str:
    manifest = json.loads((root / "manifest.json").read_text())
    apps = [a for a in manifest["apps"] if not a["killed"]]
    con = duckdb.connect()
    stage_spark(con, root / "eventlogs", min_tasks=2)
    stages, slots = sp.load_stages(con), sp.load_slots(con)
    rules = {a["app_id"]: sp.rule_from_conf(a["settings"]) for a in apps}
    replayed = {(r.app_id, r.stage_id, r.stage_attempt, r.task_index): r for r in sp.replay_flags(stages, slots, rules)}
    spark = {(c["app_id"], c["stage_id"], c["stage_attempt"], c["task_index"]): c
             for a in apps for c in a["speculative_copies"]}
    copied = {k for k, r in replayed.items() if r.copy_ms is not None}
    delay = sp.scheduling_delay_ms(stages)
    lines = [f"Spark {manifest['spark_version']}, {len(apps)} applications, {len(stages)} stage attempts of "
             f"{'/'.join(sorted({str(s.tasks) for s in stages}))} tasks; settings (each application's own, "
             f"replayed as they are): {'; '.join(sorted({_settings(r) for r in rules.values()}))}, efficiency "
             f"check off. Spark copied {len(spark)} tasks; the replay flags "
             f"{len(replayed)}, would copy {len(copied)}: {len(copied & set(spark))} of Spark's, "
             f"{len(copied - set(spark))} others, {len(set(spark) - copied)} missed; the "
             f"{len(replayed) - len(copied)} flagged but not copied found no free core of another host "
             f"before they ended (Spark did not copy them either). Spark's scheduling delay (the longest "
             f"gap, either way, on one executor, between a task's recorded end and the next launch while "
             f"tasks were pending): "
             f"{delay:.0f} ms.",
             "",
             "| application | stage | task | replay flags (ms) | replay's copy (ms, host) | Spark's copy (ms, host) "
             "| Spark - replay (ms) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for key in sorted(set(spark) | set(replayed)):
        r, c = replayed.get(key), spark.get(key)
        launch = c and c["copy_launch"] - c["stage_submitted"]
        lines.append(
            f"| {key[0]} | {key[1]}.{key[2]} | {key[3]} | {r.flagged_ms:.0f} | "
            + (f"{r.copy_ms:.0f}, {r.copy_host}" if r and r.copy_ms is not None else "none")
            + " | " + (f"{launch:.0f}, {c['copy_host']}" if c else "none")
            + " | " + (f"{launch - r.copy_ms:+.0f}" if c and r and r.copy_ms is not None else "") + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="the directory python -m tests.spark_cluster --out wrote")
    parser.add_argument("--doc", type=Path, help="write the table into this doc between its markers")
    args = parser.parse_args(argv)
    table = agreement_table(args.root)
    print(table)
    if args.doc:
        text = args.doc.read_text()
        start, end = text.index(DOC_START) + len(DOC_START), text.index(DOC_END)
        args.doc.write_text(text[:start] + "\n" + table + "\n" + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
