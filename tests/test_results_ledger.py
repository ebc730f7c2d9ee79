"""stragglers/warehouse/freshness.py: a result is current only when its recorded inputs digest matches,
its upstream tables were built and its rows are still there; otherwise it is computed and recorded
(real DuckDB files)."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from stragglers.warehouse.freshness import record_settings, recorded_inputs, recorded_settings
from stragglers.warehouse.freshness import current_or_compute, trace_rows
from stragglers.warehouse.storage import replace_table

TABLE = "nurd_sensitivity"   # a result table with its own SQL file (sql/nurd_sensitivity.sql)


def frame(f1: float, trace: str = "t") -> pd.DataFrame:
    return pd.DataFrame({"trace": [trace, trace], "method": ["nurd", "wait_for_tau"], "alpha": [0.5, None],
                         "quantile": [0.9, 0.9], "n_jobs": [3, 3], "f1": [f1, 0.2], "tpr": [0.5, 0.5],
                         "fpr": [0.1, 0.1], "f1_auc": [0.3, 0.3], "median_lead": [1.0, 1.0], "settings": ["{}", "{}"]})


@pytest.fixture
def con(tmp_path):
    with duckdb.connect(str(tmp_path / "warehouse.duckdb")) as c:
        yield c


def kept(con, inputs: str, f1: float, calls: list, upstream=("checkpoint_features",)):
    def compute():
        calls.append(inputs)
        return frame(f1)
    return current_or_compute(con, "t", {TABLE: inputs}, compute, rows=lambda _: trace_rows(con, TABLE, "t"),
                              settings={"alpha": 0.5}, upstream=upstream, table=TABLE)


def test_computed_once_then_current_until_inputs_rows_or_upstream_change(con):
    calls = []
    # the upstream table was never built: not current, whatever the record says
    first = kept(con, "a", 0.7, calls)
    assert first.rebuilt and calls == ["a"]
    assert first.rows == {TABLE: {TABLE: 2}}
    assert recorded_inputs(con, TABLE, "t") == "a"
    assert recorded_settings(con, TABLE, "t") == {"alpha": 0.5, "result_rows": {TABLE: 2}}
    assert kept(con, "a", 0.7, calls).rebuilt and calls == ["a", "a"]     # still no upstream record
    record_settings(con, "checkpoint_features", "t", {}, "features")
    # now current: nothing runs, the recorded rows are returned, the rows stay as they were
    same = kept(con, "a", 0.9, calls)
    assert not same.rebuilt and same.computed is None and len(calls) == 2
    assert same.rows == {TABLE: {TABLE: 2}}
    assert con.execute(f"SELECT f1 FROM {TABLE} WHERE method = 'nurd'").fetchone()[0] == pytest.approx(0.7)
    # other inputs: computed again, rows replaced
    assert kept(con, "b", 0.4, calls).rebuilt and calls[-1] == "b"
    assert con.execute(f"SELECT f1 FROM {TABLE} WHERE method = 'nurd'").fetchone()[0] == pytest.approx(0.4)
    # results, not records: a deleted row makes the result stale though its record is there
    con.execute(f"DELETE FROM {TABLE} WHERE method = 'wait_for_tau'")
    assert kept(con, "b", 0.4, calls).rebuilt and len(calls) == 4
    assert trace_rows(con, TABLE, "t") == {TABLE: 2}


def test_a_failed_computation_leaves_the_rows_and_the_record_as_they_were(con):
    record_settings(con, "checkpoint_features", "t", {}, "features")
    kept(con, "a", 0.7, [])

    def broken():
        raise RuntimeError("the replay failed")

    with pytest.raises(RuntimeError, match="replay failed"):
        current_or_compute(con, "t", {TABLE: "b"}, broken, rows=lambda _: trace_rows(con, TABLE, "t"),
                           settings={}, table=TABLE)
    assert recorded_inputs(con, TABLE, "t") == "a"
    assert con.execute(f"SELECT f1 FROM {TABLE} WHERE method = 'nurd'").fetchone()[0] == pytest.approx(0.7)


def test_a_computation_that_writes_its_own_rows_is_recorded_after_them(con):
    # without ``table`` the computation stores its rows itself (an evaluation's streamed tables)
    def compute():
        replace_table(con, TABLE, frame(0.3, trace="u"), "u")
        return "outcome"

    got = current_or_compute(con, "u", {f"{TABLE}:nurd": "x"}, compute,
                             rows=lambda _: trace_rows(con, TABLE, "u"), settings={"k": 1})
    assert got.rebuilt and got.computed == "outcome" and got.rows == {f"{TABLE}:nurd": {TABLE: 2}}
    assert recorded_settings(con, f"{TABLE}:nurd", "u") == {"k": 1, "result_rows": {TABLE: 2}}
    again = current_or_compute(con, "u", {f"{TABLE}:nurd": "x"}, lambda: pytest.fail("ran though current"),
                               rows=lambda _: trace_rows(con, TABLE, "u"), settings={"k": 1})
    assert not again.rebuilt
    # another trace's rows are not this trace's
    assert trace_rows(con, TABLE, "t") == {TABLE: 0}


def test_the_code_digest_changes_with_the_code_it_reads(tmp_path, monkeypatch):
    """Results computed by code are stale once it changes: the digest reads every .py file of the
    package, a change anywhere below it (or a new file) gives a new digest, and nothing else does."""
    from stragglers.warehouse.freshness import code_digest

    pkg = tmp_path / "replaycode"
    (pkg / "inner").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "inner" / "__init__.py").write_text("")
    (pkg / "inner" / "cap.py").write_text("LEASE = 0.5\n")
    (pkg / "notes.txt").write_text("not code")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = code_digest("replaycode")
    code_digest.cache_clear()
    (pkg / "notes.txt").write_text("still not code")
    assert code_digest("replaycode") == first
    code_digest.cache_clear()
    (pkg / "inner" / "cap.py").write_text("LEASE = 0.9\n")
    second = code_digest("replaycode")
    assert second != first
    code_digest.cache_clear()
    (pkg / "inner" / "more.py").write_text("")
    assert code_digest("replaycode") not in (first, second)
    code_digest.cache_clear()
