"""trace_realism's distances on hand-made statistics with answers worked by hand."""

from __future__ import annotations

import math

import duckdb
import pytest

from stragglers.warehouse.realism import TARGET, compare, cdf_figure


def test_ks_and_total_variation_by_hand():
    con = duckdb.connect()
    con.execute("CREATE TABLE trace_statistics (trace VARCHAR, statistic VARCHAR, kind VARCHAR, value DOUBLE, "
                "category VARCHAR)")
    rows = [("a", "lat", "numeric", v, None) for v in (1, 2, 3, 4)]
    rows += [("b", "lat", "numeric", v, None) for v in (3, 4, 5, 6)]
    rows += [("a", "end", "category", None, c) for c in ("FINISH", "FINISH", "FINISH", "KILL")]
    rows += [("b", "end", "category", None, c) for c in ("FINISH", "KILL", "FAIL", "FAIL")]
    rows += [("a", "only_a", "numeric", 1.0, None)]
    con.executemany("INSERT INTO trace_statistics VALUES (?, ?, ?, ?, ?)", rows)
    t = compare(con, "a", "b").set_index("statistic")
    # ECDFs: at x = 2, F_a = 0.5 and F_b = 0; at x = 4, F_a = 1 and F_b = 0.5 -> sup = 0.5
    assert t.loc["lat", "distance"] == pytest.approx(0.5)
    assert t.loc["lat", "critical_95"] == pytest.approx(1.358 * math.sqrt(8 / 16))
    # shares a: FINISH 3/4, KILL 1/4; b: FINISH 1/4, KILL 1/4, FAIL 1/2 -> (0.5 + 0 + 0.5) / 2
    assert t.loc["end", "measure"] == "TV" and t.loc["end", "distance"] == pytest.approx(0.5)
    assert not t.loc["end", "within_target"] and 0.5 > TARGET
    # a statistic one trace lacks has no distance (shown, not dropped)
    assert math.isnan(t.loc["only_a", "distance"]) and t.loc["only_a", "n b"] == 0
    assert cdf_figure(con, "a", "b")[:4] == b"\x89PNG"


def test_reexecution_persistence_row_when_both_traces_have_it():
    con = duckdb.connect()
    con.execute("CREATE TABLE trace_statistics (trace VARCHAR, statistic VARCHAR, kind VARCHAR, value DOUBLE, "
                "category VARCHAR)")
    con.executemany("INSERT INTO trace_statistics VALUES (?, ?, ?, ?, ?)",
                    [(t, "lat", "numeric", v, None) for t in ("gen", "real") for v in (1.0, 2.0)])
    assert "reexecution_corr" not in set(compare(con, "gen", "real").statistic)     # no summary: no row
    con.execute("CREATE TABLE reexecution_summary (trace VARCHAR, source VARCHAR, n_pairs BIGINT, corr DOUBLE, "
                "corr_lo DOUBLE, corr_hi DOUBLE, p_second_given_first DOUBLE, p_second_given_first_lo DOUBLE, "
                "p_second_given_first_hi DOUBLE)")
    con.executemany("INSERT INTO reexecution_summary VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        ("gen", "the trace's re-executions", 0, None, None, None, None, None, None),   # none: the model stands
        ("gen", "generator's model (every finished task re-run)", 500, 0.93, 0.91, 0.95, 0.5, 0.45, 0.6),
        ("real", "the trace's re-executions", 300, -0.11, -0.24, 0.03, 0.1, 0.01, 0.63),
        ("real", "copy model, copy_keeps=0", 300, 0.2, 0.14, 0.3, 0.1, 0.05, 0.12)])
    t = compare(con, "gen", "real").set_index("statistic")
    row = t.loc["reexecution_corr"]
    assert row["distance"] == pytest.approx(1.04) and not row["within_target"]
    assert row["n gen"] == 500 and row["n real"] == 300 and row["real"] == "-0.11 [-0.24, 0.03]"
    p = t.loc["reexecution_p_second_given_first"]
    assert p["distance"] == pytest.approx(0.4) and p["within_target"]              # 0.5 inside [0.01, 0.63]
    back = compare(con, "real", "gen").set_index("statistic")
    assert not back.loc["reexecution_corr", "within_target"]             # -0.11 is outside [0.91, 0.95]
    assert not back.loc["reexecution_p_second_given_first", "within_target"]      # 0.1 outside [0.45, 0.6]
