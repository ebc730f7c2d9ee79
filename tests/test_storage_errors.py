"""Storage failures say their true cause first: the warehouse on a real, tiny file system (tmpfs of
1 MB) that fills during a build. Skipped, with the reason, where this user cannot mount one."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import duckdb
import pytest

from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_selection
from stragglers.warehouse.staging import stage_google
from stragglers.warehouse.storage import transaction, WarehouseStorageError
from tests.minitrace import S, T0, MiniTrace


@pytest.fixture
def tiny_disk(tmp_path):
    where = tmp_path / "tiny"
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", f"tiny-{uuid.uuid4().hex[:8]}", str(where)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a 1 MB tmpfs here (needs root in a VM or container that allows it): "
                    f"{r.stderr.strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_full_disk_is_named_first_with_what_to_do(tmp_path, tiny_disk):
    m = MiniTrace()
    m.job(1, 1)
    for i in range(2000):
        m.run(1, i, T0, T0 + 3000 * S)
    root = m.write(tmp_path / "trace", n_parts=2)
    con = duckdb.connect(str(tiny_disk / "warehouse.duckdb"))
    s = SelectionSettings(min_tasks=2)
    with pytest.raises(WarehouseStorageError) as e:
        stage_google(con, root, s)
        build_selection(con, s)
    first_line = str(e.value).splitlines()[0]
    assert first_line.startswith(f"the disk holding the warehouse is full ({tiny_disk / 'warehouse.duckdb'}): ")
    assert "No space left on device" in first_line and "What to do: free space" in first_line
    assert "cannot rollback" not in first_line
    con.close()
    # the user frees space (here: the file system grows) and runs again: the tables equal a clean run's
    subprocess.run(["mount", "-o", "remount,size=256M", str(tiny_disk)], check=True)
    rerun = duckdb.connect(str(tiny_disk / "warehouse.duckdb"))
    stage_google(rerun, root, s)
    build_selection(rerun, s)
    clean = duckdb.connect(str(tmp_path / "clean.duckdb"))
    stage_google(clean, root, s)
    build_selection(clean, s)
    for table in ("task_lifecycle", "jobs", "usage_windows", "task_outcomes", "tasks", "selection_funnel"):
        query = f"SELECT * FROM {table} ORDER BY ALL"
        assert rerun.execute(query).fetchall() == clean.execute(query).fetchall(), table
    rerun.close()
    clean.close()


def test_a_failing_rollback_never_hides_the_error_that_caused_it():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    with pytest.raises(duckdb.ConstraintException) as e:
        with transaction(con):
            con.execute("INSERT INTO t VALUES (1), (1)")     # the cause
    assert "duplicate key" in str(e.value)
    # the block's error stays the error, also when ROLLBACK itself fails afterwards
    with pytest.raises(ZeroDivisionError) as e:
        with transaction(con):
            con.execute("COMMIT")                            # the transaction ends early ...
            1 / 0                                            # ... then the block fails
    assert any("the ROLLBACK after it failed too" in n for n in getattr(e.value, "__notes__", []))
    assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 0


def test_a_read_only_warehouse_is_named_first_with_what_to_do(tmp_path, tiny_disk):
    from assets.resources import PipelineSettings, WarehouseResource

    data = tiny_disk / "data"
    nurd = PipelineSettings(data_dir=str(data), synthetic_jobs=12)
    wh = WarehouseResource(nurd=nurd)
    with wh.get_connection() as con:          # a warehouse exists, then the disk turns read-only
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], check=True)
    try:
        with pytest.raises(WarehouseStorageError) as e:
            with wh.get_connection():
                pass
        first_line = str(e.value).splitlines()[0]
        assert first_line.startswith(f"the warehouse is on a read-only file system ({data / 'warehouse.duckdb'}): ")
        assert "What to do: make " in first_line
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tiny_disk)], check=True)
