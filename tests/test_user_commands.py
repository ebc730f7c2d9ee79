"""The user's own commands, typed as the README shows them, from the root of a fresh copy of the
project: ``source scripts/env.sh`` then ``dagster asset materialize --select ...``, the ``dg``
forms without ``-m`` (the root is a ``dg`` project), and the UI (``dagster dev`` and ``dg dev``
list every asset). Each runs in a real subprocess on a copy with its own data and instance."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parent.parent
#: what a fresh clone holds: the tracked files (git), or the tree without run outputs
_NOT_IN_A_CLONE = shutil.ignore_patterns(".git", ".venv", "data", "__pycache__", "*.egg-info", ".tmp_dagster*",
                                         "storage", "history", "schedules", ".nux", ".telemetry", "logs")


def _fresh_copy(dest: Path) -> Path:
    try:
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
        names = [n for n in tracked.decode().split("\0") if n and (REPO / n).is_file()]
    except (OSError, subprocess.CalledProcessError):
        names = []
    if not names:
        shutil.copytree(REPO, dest, ignore=_NOT_IN_A_CLONE)
        return dest
    for name in names:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, dest / name)
    return dest


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    copy = _fresh_copy(tmp_path_factory.mktemp("clone"))
    if sys.prefix != sys.base_prefix:   # the project's .venv there, as scripts/setup.sh leaves it (env.sh activates it)
        (copy / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    return copy


def _env(clone: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NURD_", "DAGSTER_"))}
    # the project's Python first on PATH, as `.venv/bin` is in a clone after scripts/setup.sh
    # (env.sh puts <root>/.venv/bin first when it exists); the copy's code, not the installed one
    return env | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
                  "PYTHONPATH": str(clone), "NURD_SYNTHETIC_JOBS": "12", "NURD_WORKERS": "1",
                  "NURD_AUTOMATION": "off"}


def typed(clone: Path, command: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``command`` as a user types it at the root after ``source scripts/env.sh``."""
    return subprocess.run(["bash", "-c", f"source scripts/env.sh && {command}"], cwd=clone, env=_env(clone),
                          capture_output=True, text=True, timeout=timeout)


#: a line that warns about the environment or the code: Python's warnings (BetaWarning:, UserWarning:
#: ...), dg's notices ("To suppress this warning ..."), a tool's "WARNING:"
_WARNING = re.compile(r"warning", re.IGNORECASE)
#: the runs' own event log (a step reporting what it counted, at level WARNING, is the pipeline speaking)
_RUN_LOG = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4} - dagster - (DEBUG|INFO|WARNING|ERROR) - ")


def _warnings(out: str) -> list[str]:
    return [line for line in out.splitlines() if _WARNING.search(line) and not _RUN_LOG.match(line)]


def _ok(r: subprocess.CompletedProcess) -> str:
    """The output of a command that succeeded and printed no warning."""
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert _warnings(out) == [], out[-4000:]
    return out


@functools.cache
def _asset_keys(clone: Path) -> frozenset[str]:
    """The asset keys the copy's code location defines (read once per copy: its code does not change)."""
    code = ("import json; from pipeline import defs; "
            "print(json.dumps(sorted(k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys())))")
    r = subprocess.run([sys.executable, "-c", code], cwd=clone, env=_env(clone), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-4000:]   # not a user command: without env.sh, Dagster's beta notices show
    return frozenset(json.loads(r.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def materialized(clone) -> Path:
    """``*nurd_eval`` as typed (the trace, the warehouse, NURD): the state the later commands start from."""
    out = _ok(typed(clone, "dagster asset materialize --select '*nurd_eval'"))
    assert "RUN_SUCCESS" in out
    return clone


def _nurd_rows(clone: Path) -> int:
    with duckdb.connect(str(clone / "data" / "warehouse.duckdb"), read_only=True) as db:
        return db.execute("select count(*) from job_metrics where method = 'nurd'").fetchone()[0]


def test_dagster_materialize_as_typed_from_the_root(materialized):
    # the instance and the data are the clone's own: DAGSTER_HOME=<root>/dagster_home, data=<root>/data
    assert (materialized / "dagster_home" / "history").is_dir()
    n = _nurd_rows(materialized)
    assert n > 0
    out = _ok(typed(materialized, "dagster asset materialize --select nurd_eval"))
    assert "RUN_SUCCESS" in out and _nurd_rows(materialized) == n
    # naming the module too still works (the README's older form)
    assert "RUN_SUCCESS" in _ok(typed(materialized, "dagster asset materialize -m pipeline --select nurd_eval"))


def test_materialize_py_launches_each_run_as_the_cli_does(materialized):
    """scripts/materialize.py (what scripts/main_job.sh launches): one Dagster run per argument, in one
    process, each what `dagster asset materialize --select S --partition P` does; a malformed
    argument is refused before any run."""
    out = _ok(typed(materialized, "python scripts/materialize.py baseline_eval@flag_all baseline_eval@oracle"))
    assert out.count("RUN_SUCCESS") == 2
    with duckdb.connect(str(materialized / "data" / "warehouse.duckdb"), read_only=True) as db:
        methods = {m for (m,) in db.execute("select distinct method from job_metrics").fetchall()}
    assert {"flag_all", "oracle"} <= methods
    bad = typed(materialized, "python scripts/materialize.py baseline_eval@")
    assert bad.returncode != 0 and "RUN_START" not in bad.stdout + bad.stderr
    assert bad.stderr.strip().splitlines()[-1] == "materialize: 'baseline_eval@' is not SELECTION or SELECTION@PARTITION"


def test_dg_commands_as_typed_from_the_root(materialized):
    assert "All definitions loaded successfully" in _ok(typed(materialized, "dg check defs"))
    listed = _ok(typed(materialized, "dg list defs --json"))
    keys = {a["asset_key"] for a in json.loads(listed[listed.index("{"):])["assets"]}
    assert keys == _asset_keys(materialized) and "nurd_eval" in keys
    out = _ok(typed(materialized, "dg launch --assets nurd_eval"))
    assert "RUN_SUCCESS" in out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ui_assets(port: int) -> set[str] | None:
    query = json.dumps({"query": "{ assetNodes { assetKey { path } } }"}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=query,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            nodes = json.load(resp)["data"]["assetNodes"]
    except (OSError, KeyError, TypeError, ValueError):
        return None
    return {"/".join(n["assetKey"]["path"]) for n in nodes}


@contextmanager
def _ui(clone: Path, command: str, log: Path, **env):
    """``command`` (with ``{port}``) as typed at the root, until the UI lists the assets; yields
    (port, the assets it lists); stopped with its process group at the end."""
    port = _free_port()
    with open(log, "w") as out:
        proc = subprocess.Popen(["bash", "-c", f"source scripts/env.sh && exec {command.format(port=port)}"],
                                cwd=clone, env=_env(clone) | env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        seen, deadline = None, time.monotonic() + 240
        while seen is None and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(2)
            seen = _ui_assets(port)
        assert seen is not None, f"the UI did not answer on port {port}: {log.read_text()[-3000:]}"
        yield port, seen
    finally:
        # a stop asked for, then forced: on a loaded machine Dagster's processes have been seen to
        # outlive a SIGTERM by a minute (idle, they stop in 2 s)
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


#: NURD_PROTOCOL misspelt: the code server must load (and list every asset) all the same
BAD_SETTING = {"NURD_PROTOCOL": "operatr"}


@pytest.fixture(scope="module")
def dagster_dev_with_a_bad_setting(clone, tmp_path_factory):
    """``dagster dev`` as typed, with BAD_SETTING in the environment and a data directory of its own:
    (port, its log, the data directory). One server for the tests below (each start costs a code
    server, a webserver and a daemon)."""
    tmp = tmp_path_factory.mktemp("dagster_dev")
    log, data = tmp / "ui.log", tmp / "data"
    with _ui(clone, "dagster dev -p {port} -h 127.0.0.1", log, NURD_DATA_DIR=str(data), **BAD_SETTING) as (port, _):
        yield port, log, data


def test_ui_as_typed_lists_every_asset(clone, tmp_path):
    log = tmp_path / "ui.log"
    with _ui(clone, "dg dev --port {port} --host 127.0.0.1", log) as (_, seen):
        assert seen == _asset_keys(clone)
        assert _warnings(log.read_text()) == [], log.read_text()[-3000:]


def test_dagster_dev_as_typed_lists_every_asset_despite_a_bad_setting(clone, dagster_dev_with_a_bad_setting):
    port, log, _ = dagster_dev_with_a_bad_setting
    assert _ui_assets(port) == _asset_keys(clone)
    assert _warnings(log.read_text()) == [], log.read_text()[-3000:]


def test_a_bad_setting_in_the_ui_is_a_failed_run_with_its_one_line(dagster_dev_with_a_bad_setting):
    """The code server loads despite NURD_PROTOCOL=operatr; a run launched there fails at its start
    with the line naming the value and the closest allowed one (no step runs)."""
    from dagster_graphql import DagsterGraphQLClient

    port, _, data = dagster_dev_with_a_bad_setting
    client = DagsterGraphQLClient("127.0.0.1", port_number=port)
    run_id = client.submit_job_execution("__ASSET_JOB", asset_selection=["raw_trace"])
    status, deadline = None, time.monotonic() + 240
    while time.monotonic() < deadline:
        status = client.get_run_status(run_id).value
        if status in ("SUCCESS", "FAILURE", "CANCELED"):
            break
        time.sleep(2)
    assert status == "FAILURE"
    query = json.dumps({"query": "query($id: ID!) { logsForRun(runId: $id) { ... on EventConnection { events {"
                                 " __typename ... on ErrorEvent { error { message } } } } } }",
                        "variables": {"id": run_id}}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=query,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        events = json.load(resp)["data"]["logsForRun"]["events"]
    errors = [e["error"]["message"] for e in events if e.get("error")]
    assert any("setting NURD_PROTOCOL='operatr' is invalid" in m and "did you mean 'operator'?" in m
               for m in errors), errors
    assert not any(e["__typename"] == "ExecutionStepStartEvent" for e in events)   # before any work
    assert not data.exists()
