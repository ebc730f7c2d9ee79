"""build_warehouse builds what the staging order built by hand builds: every table equal, row for row,
in real DuckDB files over a small generated trace; and it stops where it is told to."""

from __future__ import annotations

import duckdb
import pytest

from stragglers.settings import SelectionSettings
from stragglers.traces.synth import generate_google
from stragglers.warehouse.assemble import build_warehouse
from stragglers.warehouse.build import build_features, build_selection
from stragglers.warehouse.staging import stage_google
from stragglers.warehouse.storage import configure

#: When a row was written, not what it holds (table_settings.built_at).
WHEN = {"built_at"}


def tables(db) -> dict[str, list]:
    """Every base table's rows, sorted, without the columns that say when."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables "
                                    "WHERE table_type = 'BASE TABLE' ORDER BY 1").fetchall():
            cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall() if r[0] not in WHEN]
            out[table] = con.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM {table} '
                                     "ORDER BY ALL").fetchall()
        return out
    finally:
        con.close()


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    root = tmp_path_factory.mktemp("trace") / "raw"
    generate_google(root, seed=2011, n_jobs=10, n_parts=2, max_tasks=300)
    return root


def _connect(path):
    con = duckdb.connect(str(path))
    configure(con, memory_limit="2GB", threads=1, temp_directory=str(path.parent / "spill"))
    return con


def test_build_warehouse_equals_the_staging_order_by_hand(raw, tmp_path):
    s = SelectionSettings(trace="synthetic")
    by_hand, assembled = tmp_path / "by_hand" / "w.duckdb", tmp_path / "assembled" / "w.duckdb"
    for db in (by_hand, assembled):
        db.parent.mkdir()
    con = _connect(by_hand)
    parts = stage_google(con, raw, s)
    selection = build_selection(con, s)
    features = build_features(con, s)
    con.close()
    con = _connect(assembled)
    seconds: dict[str, float] = {}
    done = build_warehouse(con, raw, s, seconds=seconds)
    con.close()
    assert done == {"staging": parts, "selection": selection, "features": features}
    assert list(seconds) == ["staging", "selection", "features"] and min(seconds.values()) > 0
    assert selection["tasks"] > 0 and features["checkpoint_features"] > 0   # a warehouse with rows to compare
    want, got = tables(by_hand), tables(assembled)
    assert "checkpoint_features" in got and "table_settings" in got
    assert sorted(got) == sorted(want)
    for table in want:
        assert got[table] == want[table], table


@pytest.mark.parametrize("until, built, not_built", [
    ("staging", {"staged_tables"}, {"jobs", "tasks", "checkpoint_features"}),
    ("selection", {"jobs", "tasks", "selection_funnel"}, {"job_checkpoints", "checkpoint_features"}),
])
def test_build_warehouse_stops_after_the_step_named(raw, tmp_path, until, built, not_built):
    con = _connect(tmp_path / "w.duckdb")
    done = build_warehouse(con, raw, SelectionSettings(trace="synthetic"), until=until)
    have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert list(done) == ["staging", "selection"][: 1 + (until == "selection")]
    assert built <= have and not (not_built & have), (until, have)


def test_an_unknown_step_is_one_clear_line(raw, tmp_path):
    with pytest.raises(ValueError, match=r"until='tables' is not a step; use one of staging, selection, features"):
        build_warehouse(duckdb.connect(), raw, SelectionSettings(trace="synthetic"), until="tables")
