"""``nurd-spark advise DIR``: how to set Spark's speculation, from a directory of event logs as
``spark.eventLog.dir`` holds it (every codec, rolling folders, logs in progress).

The same code as the Dagster path (NURD_TRACE=spark_eventlog): the logs are staged
(stragglers/warehouse/spark_staging.py, every entry accounted for), the stage attempts selected
(sql/jobs__spark.sql), the engine replays Spark's rule on every one of them for every setting of
the grid and the one the applications ran with (stragglers/prediction/engine), and the answer is
stragglers/prediction/verdicts/spark_answer.py's: the numbers are those of the report's Spark row for the
same logs, budget and settings. Only the learned methods are left out (the answer is about Spark's
own rule), so it takes seconds.

The answer is printed in a few lines, the spark-defaults.conf block is written to ``--out`` (by a
temporary file renamed on success: a previous answer there is first renamed ``<out>.stale``, so a run
that fails leaves nothing that looks current), and the full report (Markdown) beside it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

import duckdb
import pandas as pd

from stragglers.prediction.engine.caps import Uncapped
from stragglers.prediction.engine.jobs import copy_job_batches
from stragglers.prediction.engine.policies import spark_rule_policies
from stragglers.prediction.engine.replay import OUTCOME_COLUMNS, outcome_rows
from stragglers.prediction.replay.clock import evaluable_jobs
from stragglers.prediction.verdicts.spark_answer import SparkAnswer, change, rule_rows, spark_answers
from stragglers.prediction.verdicts.tuning import HEADLINE_BUDGET
from stragglers.settings import EvaluationSettings, SelectionSettings, Settings, SettingError
from stragglers.settings.warehouse import format_clock_interval
from stragglers.warehouse.runner import build_table
from stragglers.warehouse.build import build_selection
from stragglers.warehouse.spark_staging import TRACE, NoEventLogError, log_account_lines, stage_spark
from stragglers.warehouse.storage import configure, table_exists

#: Where the answer goes by default (the working directory): the conf block and the report beside it.
DEFAULT_OUT = Path("spark-defaults.conf")
REPORT_SUFFIX = ".md"
#: The Dagster path's answer: <NURD_DATA_DIR>/spark/spark-defaults.conf (and .md), beside reports/.
ANSWER_DIR = "spark"
#: Stage attempts replayed per batch (their tasks, draws and free cores in memory at once).
BATCH_STAGES = 500


def outcomes(con: duckdb.DuckDBPyConnection, selection: SelectionSettings, evaluation: EvaluationSettings,
             log: Callable[[str], None]) -> pd.DataFrame:
    """Spark's rule through the engine on every evaluable stage attempt, uncapped: the rows of
    table capped_outcomes the answer reads (``rule_rows``; the evaluation's sweep makes the same rows
    for the same jobs)."""
    for table in ("job_checkpoints", "operator_tasks", "operator_checkpoints"):
        build_table(con, table, selection)
    if not con.execute("SELECT count(*) FROM operator_checkpoints WHERE trace = ?", [TRACE]).fetchone()[0]:
        raise NoEventLogError(f"no stage attempt of at least {selection.min_tasks} tasks that completed in these logs "
                              f"(--min-tasks): nothing for speculation to act on")
    jobs, _ = evaluable_jobs(con, TRACE, evaluation.min_finished, "operator_checkpoints")
    parts = []
    said, n = time.monotonic(), 0
    # a batch of stage attempts at a time: memory holds one batch's, not the directory's
    for batch in copy_job_batches(con, TRACE, evaluation.copy_keeps, jobs["job_id"].tolist(), BATCH_STAGES):
        for job in batch.values():
            parts.append(rule_rows(outcome_rows(job, spark_rule_policies(job), [Uncapped()]), TRACE))
            n += 1
            if time.monotonic() - said > 2:
                log(f"replayed {n} of {len(jobs)} stage attempts")
                said = time.monotonic()
    return pd.concat(parts, ignore_index=True) if parts else rule_rows(pd.DataFrame(columns=OUTCOME_COLUMNS), TRACE)


def advise(log_dir: Path, budget: float = HEADLINE_BUDGET, *, settings: Settings | None = None,
           work_dir: Path | None = None, log: Callable[[str], None] = lambda _: None,
           named_by: str = "setting NURD_TRACE_URL") -> tuple[SparkAnswer, list[str]]:
    """(the answer at ``budget``, one line per log that was not simply read whole) for the logs under
    ``log_dir``; ``settings``: the pipeline's (NURD_* variables), as the Dagster path reads them;
    ``named_by``: what named the directory (for the one line that says it holds no log)."""
    s = settings or Settings.from_env(trace=TRACE)
    interval = {"clock_interval_s": format_clock_interval(TRACE, s.clock_interval_s)}
    selection, evaluation = SelectionSettings.of(s, **interval), EvaluationSettings.of(s, **interval)
    with tempfile.TemporaryDirectory(prefix="nurd-spark-", dir=work_dir) as tmp:
        con = duckdb.connect(str(Path(tmp) / "warehouse.duckdb"))
        try:
            configure(con, memory_limit=s.duckdb_memory_limit, temp_directory=str(Path(tmp) / "spill"))
            stage_spark(con, Path(log_dir), trace=TRACE, min_tasks=selection.min_tasks, on_bad_rows="quarantine",
                        progress=log, named_by=named_by)
            accounts = log_account_lines(con)
            build_selection(con, selection)
            rows = outcomes(con, selection, evaluation, log)
            if rows.empty:
                raise NoEventLogError(f"no stage attempt of at least {selection.min_tasks} tasks with "
                                      f"{evaluation.min_finished} finished ones under {log_dir} (--min-tasks)")
            (answer,) = spark_answers(con, TRACE, rows, [budget], n_boot=s.n_boot, seed=s.seed)
        finally:
            con.close()
    return answer, accounts


def report_markdown(answer: SparkAnswer, accounts: Sequence[str], log_dir: Path) -> str:
    """The full answer as Markdown: the verdict, the block, the side-by-side table, every log's account."""
    lines = [f"# Spark speculation for the logs in {log_dir}", "", answer.verdict(), "", "```", answer.conf().rstrip(),
             "```", "", *[f"    {line}" for line in answer.lines()[1:]], ""]
    if accounts:
        lines += ["Logs not read whole:", "", *[f"- {a}" for a in accounts], ""]
    lines.append("How it is computed: docs/TRACES.md, 'Spark event logs', and docs/EVALUATION.md, 'The operator's "
                 "answer on Spark'.")
    return "\n".join(lines) + "\n"


def publish(out: Path, answer: SparkAnswer, accounts: Sequence[str], log_dir: Path) -> tuple[Path, Path]:
    """The conf block at ``out`` and the report beside it, each by a temporary file renamed."""
    report = out.with_name(out.name + REPORT_SUFFIX)
    for path, text in ((report, report_markdown(answer, accounts, log_dir)), (out, answer.conf())):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    return out, report


def mark_stale(out: Path) -> list[Path]:
    """A previous answer at ``out`` (and its report) renamed ``<name>.stale``: what a failed run leaves."""
    moved = []
    for path in (out, out.with_name(out.name + REPORT_SUFFIX)):
        if path.exists():
            stale = path.with_name(path.name + ".stale")
            os.replace(path, stale)
            moved.append(stale)
    return moved


def answer_files(con: duckdb.DuckDBPyConnection, trace: str, budget: float, out: Path) -> tuple[Path, Path, str]:
    """The Dagster path's files from table spark_answer (operator_budgets): the conf block at ``out`` and
    the report beside it; (their paths, the verdict). Stops with one line when the table has no answer
    at ``budget`` (the rule partitions and operator_budgets have not run on these logs)."""
    rows = con.execute("SELECT * FROM spark_answer WHERE trace = ? AND abs(budget - ?) < 1e-12",
                       [trace, budget]).df() if table_exists(con, "spark_answer") else pd.DataFrame()
    if rows.empty:
        raise LookupError(f"table spark_answer has no answer for {trace} at {budget * 100:g}%: materialize "
                          "baseline_eval's partition spark_speculation and operator_budgets first")
    side = con.execute("SELECT * FROM spark_answer_rows WHERE trace = ? AND abs(budget - ?) < 1e-12",
                       [trace, budget]).df()
    head = rows.iloc[0]
    text = (f"# Spark speculation: the answer\n\n{head.verdict}\n\n```\n{head.conf.rstrip()}\n```\n\nYou run: "
            f"{head.current}. Scored on {int(head.scored)} later stages of {int(head.stages)}:\n\n"
            + "\n".join(f"- {r.who}: {r.setting}: stage time {change(r.cut)} [{change(r.cut_hi)}, "
                         f"{change(r.cut_lo)}], +{100 * r.extra:.2f}% executor time, {r.copies:.1f} copies per stage"
                         for r in side.itertuples(index=False)) + "\n")
    written = []
    for path, body in ((out.with_name(out.name + REPORT_SUFFIX), text), (out, head.conf)):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        tmp.write_text(body)
        os.replace(tmp, path)
        written.append(path)
    return written[1], written[0], str(head.verdict)


def budget_share(text: str) -> float:
    """A budget in percent of the stages' executor time ('2%' or '2') as a share (0.02)."""
    value = text.strip()
    number = value[:-1] if value.endswith("%") else value
    try:
        share = float(number) / 100
    except ValueError:
        share = float("nan")
    if not 0 < share <= 1:
        raise ValueError(f"--budget {text!r}: expected the extra executor time you accept, in percent of your "
                         f"stages' own, above 0 and at most 100 (e.g. 2%)")
    return share


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="nurd-spark",
        description="How to set Spark's speculation (spark.speculation.*) for your applications, from their "
                    "event logs: the setting that would have cut your stages' time within a budget of extra "
                    "executor time, or 'keep your setting' when nothing gains.")
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("advise", help="read a directory of event logs, print the answer, write spark-defaults.conf")
    a.add_argument("log_dir", type=Path, help="the directory spark.eventLog.dir points at")
    a.add_argument("--budget", default=f"{HEADLINE_BUDGET * 100:g}%",
                   help="the extra executor time you accept, in percent of your stages' own (default: %(default)s)")
    a.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help="where to write the spark-defaults.conf block (default: ./%(default)s); the full answer "
                        "goes beside it as <out>.md")
    a.add_argument("--min-tasks", type=int, default=None,
                   help="stages with fewer tasks are left out (default: the pipeline's, 100: speculation acts on "
                        "stages with enough tasks to have a median)")
    args = parser.parse_args(argv)
    out = args.out
    stale = mark_stale(out)          # whatever happens next, the previous answer no longer looks current
    try:
        budget = budget_share(args.budget)
        overrides = {} if args.min_tasks is None else {"min_tasks": args.min_tasks}
        answer, accounts = advise(args.log_dir, budget, settings=Settings.from_env(trace=TRACE, **overrides),
                                  log=lambda line: print(f"nurd-spark: {line}", file=sys.stderr, flush=True),
                                  named_by="nurd-spark advise's argument")
    except (NoEventLogError, SettingError, ValueError, FileNotFoundError, LookupError) as e:
        kept = f" (the previous answer is now {stale[0]})" if stale else ""
        print(f"nurd-spark: error: {' '.join(str(e).split())}{kept}", file=sys.stderr)
        return 2
    for line in answer.lines():
        print(line)
    if accounts:
        print("Logs not read whole:")
        for line in accounts:
            print(f"  {line}")
    conf, report = publish(out, answer, accounts, args.log_dir)
    for path in (conf, report):        # the new answer replaces any earlier one: nothing stale is left beside it
        path.with_name(path.name + ".stale").unlink(missing_ok=True)
    print(f"Wrote {conf} (add it to your spark-defaults.conf, or pass each line as --conf) and the full answer "
          f"to {report}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
