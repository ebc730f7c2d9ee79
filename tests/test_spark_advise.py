"""``nurd-spark advise DIR`` as an operator types it (a subprocess of the installed script, or
``python -m stragglers.advice.spark`` where the script is absent): the answer printed verdict first, the
conf block and its report written, every log not read whole named with what was done, a directory
with nothing to read refused in one line, a failed run's previous answer set aside as stale, the
budget read as the help says; and the same answer, to the number, as the Dagster path's (asset
operator_budgets' table spark_answer) on the same logs, budget and settings."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from stragglers.advice.spark import advise
from stragglers.prediction.evaluation.run import evaluate
from stragglers.settings.protocols import OPERATOR
from stragglers.prediction.verdicts.spark_answer import answer_table
from stragglers.reports.compute.budget_tables import budget_tables
from stragglers.settings import EvaluationSettings, SelectionSettings, Settings
from stragglers.warehouse.assemble import build_warehouse
from tests import spark_logs

TRACE = "spark_eventlog"
REPO = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "nurd-spark"
VERDICTS = ("Set ", "Keep your setting: ", "Leave speculation off: ")
ERROR = "nurd-spark: error: "
#: two real logs of multi-host applications, 51 stage attempts of at least 100 tasks: an answer with
#: numbers in it (a best setting, its mean cut and minimum detectable effect, 41 scored stages), staged,
#: featured and evaluated in well under a minute
TWO_LOGS = ("gpu_oom_eventlog.zstd", "tasks_executors_fail_compressed_eventlog.zstd")
SMALL_LOG = "gpu_oom_eventlog.zstd"       # 10 stage attempts of at least 100 tasks: the quickest real answer
CUT_LOG, CUT_AT = "nds_q72_dataproc_2_2.zstd", 6000   # a line inside stage 21, after 21 stages completed


def nurd_spark(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """The command as a user runs it: the installed script (else the module), no NURD_* variable set."""
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "stragglers.advice.spark"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NURD_")} | {"OMP_NUM_THREADS": "1"}
    return subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def copy_logs(spark_realdata: Path, to: Path, names: tuple[str, ...] | None = None) -> Path:
    """A copy of the real logs (all, or ``names``): the shared folder is never written to."""
    if names is None:
        shutil.copytree(spark_realdata, to)
    else:
        to.mkdir(parents=True)
        for name in names:
            shutil.copy(spark_realdata / name, to / name)
    return to


#: the heading of the lines that name the logs not read whole, after the answer
ACCOUNT_HEAD = "Logs not read whole:"


def answer_lines(stdout: str) -> list[str]:
    """The answer: stdout less the lines naming logs (after ``ACCOUNT_HEAD``, up to the last line)."""
    lines = stdout.splitlines()
    if ACCOUNT_HEAD in lines:
        i = lines.index(ACCOUNT_HEAD)
        lines = lines[:i] + lines[-1:]
    return lines


def named_logs(stdout: str) -> list[str]:
    """The lines naming a log not read whole (each indented under ``ACCOUNT_HEAD``)."""
    lines = stdout.splitlines()
    if ACCOUNT_HEAD not in lines:
        return []
    return [line.strip() for line in lines[lines.index(ACCOUNT_HEAD) + 1:] if line.startswith("  ")]


def conf_keys(text: str) -> dict[str, str]:
    return dict(re.findall(r"^(spark\.speculation\S*)\s+(\S+)$", text, re.M))


def check_published(run: subprocess.CompletedProcess, out: Path) -> str:
    """A successful run: exit 0, the verdict first, the conf block at ``out`` and the report beside it
    holding the same verdict and block; stderr only progress lines. Returns the verdict."""
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and all(line.startswith("nurd-spark: ") for line in run.stderr.splitlines())
    lines = answer_lines(run.stdout)
    verdict = lines[0]
    assert verdict.startswith(VERDICTS), run.stdout
    assert lines[1].startswith("You run: ") and lines[-1].startswith("Wrote ") and out.name in lines[-1]
    conf = out.read_text()
    report = out.with_name(out.name + ".md").read_text()
    assert verdict in report and conf.rstrip() in report
    keys = conf_keys(conf)
    if verdict.startswith("Set "):
        assert keys["spark.speculation"] == "true" and keys["spark.speculation.efficiency.enabled"] == "false"
    else:
        assert conf.startswith("# nothing to change: ") and keys.get("spark.speculation", "false") == "false"
    assert not list(out.parent.glob("*.stale")) and not list(out.parent.glob(".*.tmp*"))
    return verdict


def test_the_answer_on_a_copy_of_the_real_logs(spark_realdata, tmp_path):
    logs = copy_logs(spark_realdata, tmp_path / "spark-events")
    run = nurd_spark("advise", str(logs), "--out", "conf/spark-defaults.conf", cwd=tmp_path)
    verdict = check_published(run, tmp_path / "conf" / "spark-defaults.conf")
    # none of these applications ran speculation: to keep is to leave it off, and the block says so
    if not verdict.startswith("Set "):
        assert verdict.startswith("Leave speculation off: ")
        assert conf_keys((tmp_path / "conf" / "spark-defaults.conf").read_text()) == {"spark.speculation": "false"}
    # the logs not read whole are named after the answer, each with what was done with it
    named = named_logs(run.stdout)
    assert any(line.startswith("truncated_eventlog (truncated): used up to its last complete stage")
               for line in named)
    assert any(line.startswith("malformed_json_eventlog.zstd ") for line in named)
    assert run.stdout.index(verdict) < run.stdout.index(ACCOUNT_HEAD)
    # the default budget is the headline's, 2%
    assert "2% extra executor time" in run.stdout


def test_a_directory_of_every_kind_names_each_log_not_read_whole_and_still_answers(spark_realdata, tmp_path):
    """One complete log, a real log cut at a line boundary inside a stage, one in progress and a file
    that is no log: the last three named with what was done, the answer from what could be read."""
    logs = tmp_path / "spark-events"
    spark_logs.write(logs / "app-20240101000000-0001.zstd", spark_logs.application("app-20240101000000-0001"), "zstd")
    with open(spark_realdata / CUT_LOG, "rb") as raw:
        import io

        import zstandard
        text = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))
        cut = b"".join(text.readline() for _ in range(CUT_AT))
    assert cut.endswith(b"\n") and b"SparkListenerApplicationEnd" not in cut
    spark_logs.write(logs / "nds_q72_cut", cut)
    spark_logs.write(logs / "app-20240101000000-0002.lz4.inprogress",
                     spark_logs.application("app-20240101000000-0002", end=False), "lz4")
    (logs / "notes").write_text("application notes\nnot an event log\n")   # named as a plain log, none
    run = nurd_spark("advise", str(logs), "--out", "spark-defaults.conf", cwd=tmp_path)
    check_published(run, tmp_path / "spark-defaults.conf")
    named = {line.split(" ", 1)[0]: line for line in named_logs(run.stdout)}
    assert set(named) == {"nds_q72_cut", "app-20240101000000-0002.lz4.inprogress", "notes"}, run.stdout
    assert "(truncated): used up to its last complete stage: 21 of 22 stage attempts" in named["nds_q72_cut"]
    assert "(in progress): used up to what was written so far" in named["app-20240101000000-0002.lz4.inprogress"]
    assert "notes (unreadable): skipped: none of its 2 lines is a Spark event" in named["notes"]
    # the report lists them too
    report = (tmp_path / "spark-defaults.conf.md").read_text()
    assert all(name in report for name in named)


@pytest.mark.parametrize("case", ["empty", "missing", "garbage"])
def test_a_directory_with_nothing_to_read_is_refused_in_one_line(tmp_path, case):
    logs = tmp_path / "spark-events"
    if case != "missing":
        logs.mkdir()
    if case == "garbage":
        (logs / "notes").write_text("application notes\nnot an event log\n")
        (logs / "app-20240101000000-0001.zstd").write_bytes(b"not zstd at all\n")
        (logs / "eventlog_v2_app-20240101000000-0002").mkdir()
    run = nurd_spark("advise", str(logs), cwd=tmp_path)
    assert run.returncode != 0 and run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith(ERROR) and str(logs) in line, run.stderr
    assert {"empty": "empty", "missing": "does not exist", "garbage": "none a readable"}[case] in line
    assert not (tmp_path / "spark-defaults.conf").exists()


def test_budgets_read_as_the_help_says_and_a_failed_run_leaves_the_previous_answer_stale(spark_realdata, tmp_path):
    logs = copy_logs(spark_realdata, tmp_path / "spark-events", (SMALL_LOG,))
    out = tmp_path / "spark-defaults.conf"
    first = nurd_spark("advise", str(logs), "--budget", "2", "--out", str(out), cwd=tmp_path)
    check_published(first, out)
    conf, report = out.read_text(), out.with_name(out.name + ".md").read_text()
    # 2 and 2% are the same budget (percent, as --help says): the same answer
    again = nurd_spark("advise", str(logs), "--budget", "2%", "--out", str(out), cwd=tmp_path)
    check_published(again, out)
    assert answer_lines(again.stdout) == answer_lines(first.stdout) and out.read_text() == conf
    # a budget that is no share of the executor time is refused in one line, before anything is read
    # (the previous answer is set aside all the same: a failed run leaves nothing that looks current)
    for bad in ("0%", "150%", "x", "2%%"):
        run = nurd_spark("advise", str(logs), "--budget", bad, "--out", str(out), cwd=tmp_path)
        assert run.returncode != 0 and run.stdout == ""
        (line,) = run.stderr.splitlines()
        assert line.startswith(ERROR) and "Traceback" not in line, (bad, run.stderr)
        assert not out.exists() and ("previous answer is now" in line) == (bad == "0%")
    check_published(nurd_spark("advise", str(logs), "--budget", "2", "--out", str(out), cwd=tmp_path), out)
    # a run that fails after a successful one leaves the previous answer as <out>.stale, nothing current
    empty = tmp_path / "empty"
    empty.mkdir()
    failed = nurd_spark("advise", str(empty), "--out", str(out), cwd=tmp_path)
    assert failed.returncode != 0 and failed.stdout == ""
    (error,) = failed.stderr.splitlines()
    assert error.startswith(ERROR) and str(out) + ".stale" in error
    assert not out.exists() and not out.with_name(out.name + ".md").exists()
    assert out.with_name(out.name + ".stale").read_text() == conf
    assert out.with_name(out.name + ".md.stale").read_text() == report


# --- the same answer as the Dagster path ----------------------------------------------------------

def _same(a, b) -> bool:
    """Equal, NaN and None alike for a missing value."""
    missing = (lambda v: v is None or (isinstance(v, float) and math.isnan(v)))
    return (missing(a) and missing(b)) or a == b


def test_the_same_logs_budget_and_settings_give_the_dagster_paths_answer(spark_realdata, tmp_path, monkeypatch):
    """Asset operator_budgets' answer (the warehouse built as build_warehouse does, baseline_eval's
    partition spark_speculation evaluated under the operator's protocol, budget_tables) and the
    console command's, on the same logs: the same setting, numbers, verdict, block and rows."""
    logs = copy_logs(spark_realdata, tmp_path / "spark-events", TWO_LOGS)
    monkeypatch.setenv("NURD_ON_BAD_ROWS", "quarantine")
    settings = Settings(trace=TRACE, on_bad_rows="quarantine")
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    build_warehouse(con, logs, SelectionSettings(trace=TRACE, on_bad_rows="quarantine"))
    evaluate(con, TRACE, ["spark_speculation"], EvaluationSettings(workers=1, **OPERATOR))
    *_, heads, rows = budget_tables(con, settings)
    con.close()
    dagster = heads[(heads["trace"] == TRACE) & ((heads["budget"] - 0.02).abs() < 1e-12)]
    assert len(dagster) == 1
    dagster = dagster.iloc[0].to_dict()
    answer, _ = advise(logs, 0.02, settings=settings, work_dir=tmp_path)
    head, side = answer_table(answer)
    # an answer with numbers in it, not an empty one
    assert head["scored"] > 0 and head["chosen"] != "none" and math.isfinite(head["chosen_mde"])
    for column in ("chosen", "chosen_mean", "chosen_mde", "chosen_spend", "chosen_stages", "verdict", "conf",
                   "recommended", "stages", "applications", "scored", "current"):
        assert _same(dagster[column], head[column]), (column, dagster[column], head[column])
    dagster_rows = rows[(rows["trace"] == TRACE) & ((rows["budget"] - 0.02).abs() < 1e-12)].to_dict("records")
    assert len(dagster_rows) == len(side) == 3
    for d, c in zip(dagster_rows, side):
        assert all(_same(d[k], c[k]) for k in c), (d, c)
