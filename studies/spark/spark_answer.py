"""The operator's answer on a directory of Spark event logs: stage them (bad lines quarantined and
counted, as NURD_ON_BAD_ROWS=quarantine does), replay Spark's speculation with each setting of the
grid on the earlier half of the stage attempts long enough to matter, and score the one chosen at
each budget on the later half, beside Spark 4.0's and 3.x's defaults. ``--doc`` writes the result
into docs/EVALUATION.md between its markers.

    .venv/bin/python studies/spark/spark_answer.py ../shared/realdata/spark_eventlogs [--doc docs/EVALUATION.md]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import duckdb

from stragglers.prediction import spark_speculation as sp
from stragglers.warehouse.spark_staging import stage_spark

DOC_START = "<!-- measured: studies/spark/spark_answer.py DIR --doc docs/EVALUATION.md -->"
DOC_END = "<!-- end of measured answer -->"
BUDGETS = (1.0, 5.0, 10.0)


def answer_text(log_dir: Path, min_tasks: int) -> str:
    started = time.monotonic()
    con = duckdb.connect()
    counts = stage_spark(con, log_dir, min_tasks=min_tasks, on_bad_rows="quarantine")
    stages, slots = sp.load_stages(con), sp.load_slots(con)
    long, _, _ = sp.split_short(stages, slots)
    later = sorted(long, key=lambda s: s.submitted_ms)[len(long) // 2:]
    out = [f"{counts['logs']} logs, {counts['applications']} applications staged ({counts['skipped_files']} files "
           f"skipped, {counts['bad_lines']} bad lines quarantined), NURD_MIN_TASKS={min_tasks}: "
           f"{counts['selected_stage_attempts']} stage attempts selected, {len(stages)} with task attempts.", ""]
    for budget in BUDGETS:
        ans = sp.answer(stages, slots, budget_pct=budget)
        out += [f"- budget {budget:g}%: {ans.text()}"]
    out += ["", "Spark's defaults and the grid's most aggressive setting on the later stages:", "",
            "| rule | stage time cut % | extra executor time % | copies |", "| --- | --- | --- | --- |"]
    for rule in (*sp.NAMED_RULES, sp.SpeculationRule("q0.5-m1.25-r100ms", 0.5, 1.25, 100.0)):
        s = sp.score(sp.replay_policy(later, slots, rule))
        out.append(f"| {rule.name} | {s.cut_pct:.3f} | {s.extra_pct:.3f} | {s.copies} |")
    out += ["", f"Everything above, staging included, in {time.monotonic() - started:.0f} s."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("--min-tasks", type=int, default=100)
    parser.add_argument("--doc", type=Path)
    args = parser.parse_args(argv)
    text = answer_text(args.log_dir, args.min_tasks)
    print(text)
    if args.doc:
        doc = args.doc.read_text()
        start, end = doc.index(DOC_START) + len(DOC_START), doc.index(DOC_END)
        args.doc.write_text(doc[:start] + "\n" + text + "\n" + doc[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
