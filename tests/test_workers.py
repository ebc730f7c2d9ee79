"""Where the replays run (stragglers/prediction/replay/workers.py) on real components: a real DuckDB
warehouse built from a small generated trace, a real ``distributed.LocalCluster`` (worker processes, TCP on
127.0.0.1), real Dagster runs, and a real ``dagster asset materialize`` subprocess
interrupted by a signal."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import psutil
import pytest
from dagster_duckdb import DuckDBResource

from assets import prediction
from assets.resources import PipelineSettings
from stragglers.settings import EngineSettings
from stragglers.prediction.evaluation.run import evaluate
from stragglers.settings import EvaluationSettings, SelectionSettings
from stragglers.traces.synth import generate_google
from stragglers.warehouse.build import build_features, build_selection
from stragglers.warehouse.staging import stage_google

REPO = Path(__file__).resolve().parent.parent
TABLES = {  # result table -> sort key (row order in a table means nothing)
    "predictions": ["method", "job_id", "task_id"],
    "job_metrics": ["method", "job_id"],
    "f1_over_time": ["method", "job_id", "k"],
    "method_fallbacks": ["method", "job_id", "k"],
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """A warehouse with checkpoint_features of a small embedded trace (no results yet)."""
    root = tmp_path_factory.mktemp("engine")
    generate_google(root / "raw", seed=31, n_jobs=13, n_parts=2)   # 5 jobs with finished tasks (generator 3)
    db = root / "warehouse.duckdb"
    with duckdb.connect(str(db)) as con:
        s = SelectionSettings()
        stage_google(con, root / "raw", s)
        build_selection(con, s)
        build_features(con, s)
    return db


def copy_of(db: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(db, dest / "warehouse.duckdb")
    return dest / "warehouse.duckdb"


def results(db: Path) -> dict[str, pd.DataFrame]:
    """Every result table, sorted, without the timing columns."""
    with duckdb.connect(str(db), read_only=True) as con:
        out = {}
        for table, key in TABLES.items():
            df = con.execute(f"SELECT * FROM {table}").df()
            out[table] = df.drop(columns=["seconds"], errors="ignore").sort_values(key, ignore_index=True)
        return out


def assert_same(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    for table in TABLES:
        pd.testing.assert_frame_equal(a[table], b[table], check_exact=True, obj=table)


def run_evaluate(db: Path, methods, *, workers: int = 1, engine: EngineSettings | None = None,
                 progress=None):
    with duckdb.connect(str(db)) as con:
        return evaluate(con, "synthetic", methods, EvaluationSettings(workers=workers, n_boot=20),
                        engine=engine, progress=progress, exchange=db.parent / "exchange")


@pytest.fixture(scope="module")
def reference(warehouse, tmp_path_factory) -> dict[str, pd.DataFrame]:
    """NURD and HBOS replayed in this process, all jobs in one batch."""
    db = copy_of(warehouse, tmp_path_factory.mktemp("serial"))
    outcome = run_evaluate(db, ["nurd", "hbos"], engine=EngineSettings(batch_jobs=1000))
    assert outcome.n_jobs >= 4 and outcome.replay.n_batches == 1
    return results(db)


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", protocol="tcp",
                      dashboard_address=None) as lc, Client(lc, set_as_default=False) as client:
        yield lc, client


def test_local_pool_in_batches_of_two_jobs_gives_the_results_of_one_batch(warehouse, reference, tmp_path):
    db = copy_of(warehouse, tmp_path)
    calls = []
    outcome = run_evaluate(db, ["nurd", "hbos"], workers=2, engine=EngineSettings(batch_jobs=2),
                           progress=lambda done, total: calls.append((done, total)))
    assert outcome.replay.n_batches == -(-outcome.n_jobs // 2) >= 3
    assert outcome.replay.engine == "local pool of 2 processes"
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] == outcome.n_jobs and {t for _, t in calls} == {outcome.n_jobs}
    assert_same(results(db), reference)
    assert not list((tmp_path / "exchange").glob("*.parquet*"))   # batch files removed


def test_dagster_runs_on_a_local_dask_cluster_match_the_local_run(warehouse, reference, cluster, tmp_path):
    """nurd_eval and the hbos partition of baseline_eval with NURD_DASK_ADDRESS's setting; the local
    pool gives the reference's results (previous test), so the three engines agree."""
    lc, _ = cluster
    db = copy_of(warehouse, tmp_path)
    res = {"nurd": PipelineSettings(data_dir=str(tmp_path), n_boot=20, batch_jobs=3, dask_address=lc.scheduler_address),
           "duckdb": DuckDBResource(database=str(db))}
    with dg.instance_for_test() as instance:
        a = dg.materialize([prediction.nurd_eval], resources=res, instance=instance)
        b = dg.materialize([prediction.baseline_eval], partition_key="hbos", resources=res, instance=instance)
        assert a.success and b.success
        meta = a.asset_materializations_for_node("nurd_eval")[0].metadata
        assert meta["engine"].value.startswith("dask cluster at tcp://127.0.0.1") and meta["batches"].value >= 2
        logs = [e.message for e in instance.all_logs(a.run_id) if e.message]
        assert any("replayed 0/" in m for m in logs) and any("jobs (100%)" in m for m in logs)
    assert_same(results(db), reference)


def test_a_killed_dask_worker_is_survived_with_the_same_results(warehouse, reference, cluster, tmp_path):
    lc, client = cluster
    client.wait_for_workers(2, timeout=60)
    killed = []

    def kill_a_busy_worker(done: int, total: int) -> None:
        if killed or done == total:
            return
        busy = [addr for addr, keys in client.processing().items() if keys]
        if busy:
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    db = copy_of(warehouse, tmp_path)
    run_evaluate(db, ["nurd", "hbos"], engine=EngineSettings(dask_address=lc.scheduler_address, batch_jobs=1000),
                 progress=kill_a_busy_worker)
    assert killed, "no worker was busy when the replay was polled"
    assert not psutil.pid_exists(killed[0]) or psutil.Process(killed[0]).status() == psutil.STATUS_ZOMBIE
    assert_same(results(db), reference)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_replay_stops_the_workers_and_leaves_no_rows(warehouse, tmp_path, sig):
    data = tmp_path / "data"
    db = copy_of(warehouse, data)
    env = os.environ | {"NURD_DATA_DIR": str(data), "DAGSTER_HOME": str(tmp_path / "home"), "NURD_WORKERS": "2",
                        "NURD_AUTOMATION": "off", "DAGSTER_DISABLE_TELEMETRY": "1", "GX_ANALYTICS_ENABLED": "false",
                        "PYTHONPATH": str(REPO)}
    (tmp_path / "home").mkdir()
    log = tmp_path / "run.log"
    # SOS replays for a while on these jobs (over a minute): the signal arrives while workers
    # compute, after the first progress line (its first job may already be done by then)
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "dagster", "asset", "materialize", "-m", "pipeline",
                                 "--select", "baseline_eval", "--partition", "sos"],
                                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "replayed " not in log.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, log.read_text()[-3000:]
        # the pool's workers are forked from the multiprocessing fork server (engine.LocalEngine),
        # on demand: wait until both exist, then signal while they compute
        servers, workers = [], []
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            servers = [p for p in psutil.Process(proc.pid).children(recursive=True)
                       if "multiprocessing.forkserver" in " ".join(p.cmdline())
                       and p.parent() is not None and p.parent().pid == proc.pid]
            workers = servers[0].children() if len(servers) == 1 else []
            time.sleep(0.2)
        assert len(servers) == 1, log.read_text()[-3000:]
        assert len(workers) == 2, log.read_text()[-3000:]
        proc.send_signal(sig)
        proc.wait(timeout=60)
        assert proc.returncode != 0
        gone, alive = psutil.wait_procs(workers + servers, timeout=10)
        assert not alive
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "replayed " in text and "replayed 5/5" not in text and "RUN_SUCCESS" not in text
    # the warehouse opens for writing and holds no row of the interrupted evaluation
    with duckdb.connect(str(db)) as con:
        for table in [*TABLES, "evaluation_runs"]:
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
        con.execute("CREATE TABLE written_after AS SELECT 1 AS x")
    assert not list((data / "exchange").glob("*.parquet*"))
