"""Fault injection with real processes (docs/RELIABILITY.md records the outcomes).

- the CLI run killed (SIGKILL) inside table writes and at stage boundaries, then re-run:
  every table identical to a clean run's (nothing lost, nothing half-written);
- two CLI runs on one data dir at once: the second fails at once naming the first run,
  the first finishes, the warehouse equals a clean run's;
- a download killed mid-file, then resumed: every file complete and verified;
- bad settings stop before any work (no retries), a missing upstream table names the asset.

Failpoints (stragglers/settings/failpoints.py) place the kills deterministically.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from assets import prediction, traces
from assets.resources import PipelineSettings, WarehouseResource
from pipeline import behaviour_snapshot
from stragglers.settings import SettingError

REPO = Path(__file__).resolve().parent.parent
SELECT = "*tasks"   # staging, jobs, tasks and their checks: every kind of write, kept short


def _env(data: Path, **extra) -> dict:
    home = data / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NURD_", "DAGSTER_"))}
    return env | {"NURD_DATA_DIR": str(data), "DAGSTER_HOME": str(home), "NURD_SYNTHETIC_JOBS": "12",
                  "NURD_WORKERS": "1", "NURD_AUTOMATION": "off", "GX_ANALYTICS_ENABLED": "false",
                  "DAGSTER_DISABLE_TELEMETRY": "1", "PYTHONWARNINGS": "ignore"} | extra


def _cli(data: Path, select: str = SELECT, **extra) -> list[str]:
    return [sys.executable, "-m", "dagster", "asset", "materialize", "-m", "pipeline", "--select", select]


def run_cli(data: Path, select: str = SELECT, **extra) -> subprocess.CompletedProcess:
    return subprocess.run(_cli(data, select), cwd=REPO, env=_env(data, **extra), capture_output=True, text=True,
                          timeout=300)


def tables(data: Path) -> dict:
    return {k: v for k, v in behaviour_snapshot.snapshot(data).items() if k.startswith("table:")}


@pytest.fixture(scope="module")
def busy(tmp_path_factory) -> dict:
    """A run paused after jobs, a second CLI run started meanwhile, then the first resumed:
    the second's output and the first's (complete, otherwise undisturbed) tables."""
    data = tmp_path_factory.mktemp("busy")
    resume = data / "resume"
    first = subprocess.Popen(_cli(data), cwd=REPO, env=_env(data, NURD_FAILPOINT="pause@after:jobs",
                                                            NURD_FAILPOINT_RESUME=str(resume)),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out = []
        for line in first.stdout:
            out.append(line)
            if "failpoint after:jobs: paused" in line:
                break
        run_id = re.search(r" - ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}) - ", "".join(out))
        assert run_id, "".join(out)[-3000:]
        second = run_cli(data)
        resume.touch()
        rest, _ = first.communicate(timeout=300)
        assert first.returncode == 0, rest[-3000:]
    finally:
        if first.poll() is None:
            first.kill()
    return {"run_id": run_id.group(1), "second": second, "tables": tables(data)}


def test_second_cli_run_fails_at_once_naming_the_first(busy):
    second = busy["second"]
    assert second.returncode != 0
    text = second.stdout + second.stderr
    assert f"is being written by run {busy['run_id']}" in text, text[-3000:]
    assert "This run stops before doing any work" in text
    assert busy["tables"]["table:tasks"]["rows"] > 0       # the first run finished its work


def test_kill_inside_writes_and_at_boundaries_then_rerun_equals_clean_run(busy, tmp_path):
    data = tmp_path / "faulty"
    for point in ("kill@after:jobs", "kill@inside:tasks"):   # a stage boundary, then inside a transaction
        r = run_cli(data, NURD_FAILPOINT=point)
        assert r.returncode == -signal.SIGKILL, (point, r.stderr[-3000:])
    r = run_cli(data)
    assert r.returncode == 0, r.stderr[-3000:]
    assert tables(data) == busy["tables"]     # identical to a run that was never killed: no row lost


DOWNLOAD = """
import sys
from pathlib import Path
from stragglers.traces.download import download_google
download_google(sys.argv[1], Path(sys.argv[2]), parts="all", retries=1000, backoff_s=0.2, progress=False)
"""


def test_download_killed_mid_file_then_resumed(tmp_path):
    from tests.httpserver import TraceServer, make_bucket

    root = tmp_path / "bucket"
    files = make_bucket(root, n_parts=2, rows=600)
    part = "task_usage/part-00001-of-00500.csv.gz"
    dest = tmp_path / "dest"
    with TraceServer(root) as server:
        server.cut_always[part] = len(files[part]) // 2    # every attempt stops half way
        proc = subprocess.Popen([sys.executable, "-c", DOWNLOAD, server.url, str(dest)], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        partial = dest / (part + ".part")
        deadline = time.monotonic() + 60
        while not (partial.exists() and partial.stat().st_size > 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert partial.exists() and 0 < partial.stat().st_size < len(files[part])
        assert not (dest / part).exists()          # never a partial file under the final name
        server.cut_always.clear()
        resumed = subprocess.run([sys.executable, "-c", DOWNLOAD, server.url, str(dest)], cwd=REPO,
                                 capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        ranges = [r.range for r in server.requests_for(part)]
    for rel, data in files.items():
        assert (dest / rel).read_bytes() == data, rel
    assert ranges[-1] and ranges[-1].startswith("bytes=")   # the last request resumed, not restarted


def _failure_message(result) -> str:
    """The errors of the run's failed steps and failed resource initializations."""
    return "\n".join(str(e.event_specific_data.error) for e in result.all_events
                     if e.is_step_failure or e.event_type_value == "RESOURCE_INIT_FAILURE")


def test_setting_error_is_not_retried_and_missing_upstream_names_the_asset(tmp_path):
    with pytest.raises(SettingError, match="NURD_TRACE_PARTS='abc'"):
        PipelineSettings(data_dir=str(tmp_path), trace_parts="abc")   # in Python: at once
    # from a run config (the launchpad): the run fails, naming the value, and is not retried
    result = dg.materialize([traces.raw_trace], resources={"nurd": PipelineSettings(data_dir=str(tmp_path))},
                            run_config={"resources": {"nurd": {"config": {"trace_parts": "abc"}}}},
                            raise_on_error=False, instance=dg.DagsterInstance.ephemeral())
    assert not result.success
    assert "setting NURD_TRACE_PARTS='abc' is invalid: expected 'all', 'events' or a positive integer" in _failure_message(result)
    assert not [e for e in result.all_events if e.event_type_value == "STEP_UP_FOR_RETRY"]

    nurd = PipelineSettings(data_dir=str(tmp_path / "fresh"), workers=1)
    result = dg.materialize([prediction.nurd_eval], resources={"nurd": nurd, "duckdb": WarehouseResource(nurd=nurd)},
                            raise_on_error=False, instance=dg.DagsterInstance.ephemeral())
    assert not result.success
    assert "table checkpoint_features does not exist in the warehouse: materialize asset checkpoint_features" \
        in _failure_message(result)
