"""Node ranking and the config-only failure predictor on the real Google 2011 events
(job_events, machine_events, task_events parts 0-13; no task_usage), with counts
checked against independent DuckDB queries over the raw files. Skipped, with the
reason, where the excerpt is absent."""

from __future__ import annotations

import duckdb
import pytest

from stragglers.nodes.build import build_attempts, build_node_ranking
from stragglers.nodes.settings import NodeSettings
from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_jobs, create_view, sql_path_literal

SENTINEL = 2**63 - 1


@pytest.fixture(scope="module")
def real(realdata, tmp_path_factory):
    raw = realdata / "google_2011"
    s = SelectionSettings(trace="google_2011")
    con = duckdb.connect(str(tmp_path_factory.mktemp("real") / "w.duckdb"))
    params = s.sql_params() | {"raw_dir": sql_path_literal(raw.resolve())}
    # the events only (this excerpt has no task_usage): the staging views the pipeline uses
    for view in ("stg_job_events", "stg_task_events"):
        create_view(con, view, **params)
    build_jobs(con, s)
    build_attempts(con, raw, s)
    yield con, raw, s
    con.close()


def raw_events(raw, table: str) -> str:
    cols = {"task_events": "time BIGINT, mi INT, job_id BIGINT, task BIGINT, machine BIGINT, ev INT, u VARCHAR, "
                           "cls INT, prio INT, cpu DOUBLE, mem DOUBLE, disk DOUBLE, diff INT",
            "job_events": "time BIGINT, mi INT, job_id BIGINT, ev INT, u VARCHAR, cls INT, name VARCHAR, lname VARCHAR"}
    spec = "{" + ", ".join(f"'{c.split()[0]}': '{c.split()[1]}'" for c in cols[table].split(", ")) + "}"
    return f"read_csv('{raw}/{table}/*.csv.gz', header=false, auto_detect=false, columns={spec})"


def test_node_ranking_on_real_events(real):
    con, raw, s = real
    counts = build_node_ranking(con, s, NodeSettings(min_tasks_per_node=20, fit_sample_nodes=5), log=lambda m: None)
    # independent: finished tasks of production jobs (max class >= 1) with >= 100 task indices, whose
    # FINISH follows a SCHEDULE inside the window, in jobs with >= 2 such tasks
    te, je = raw_events(raw, "task_events"), raw_events(raw, "job_events")
    expected = con.execute(f"""
        WITH sel AS (
            SELECT job_id FROM {te} GROUP BY job_id HAVING count(DISTINCT task) >= 100
            INTERSECT SELECT job_id FROM {je} GROUP BY job_id HAVING max(cls) >= 1),
        fin AS (
            SELECT f.job_id, f.task, max(f.time) AS t_fin, arg_max(f.machine, f.time) AS machine
            FROM {te} f SEMI JOIN sel USING (job_id)
            WHERE f.ev = 4 AND f.time < {SENTINEL} AND f.machine IS NOT NULL GROUP BY f.job_id, f.task),
        timed AS (
            SELECT fin.job_id, fin.task, any_value(fin.machine) AS machine FROM fin
            JOIN {te} s ON s.job_id = fin.job_id AND s.task = fin.task AND s.ev = 1 AND s.time <= fin.t_fin
            GROUP BY fin.job_id, fin.task HAVING max(s.time) > 0),
        kept AS (SELECT * FROM timed WHERE job_id IN (SELECT job_id FROM timed GROUP BY job_id HAVING count(*) >= 2))
        SELECT (SELECT count(*) FROM kept),
               (SELECT count(*) FROM (SELECT machine FROM kept GROUP BY machine HAVING count(*) >= 20))
        """).fetchone()
    assert counts["node_task_durations"] == expected[0]
    assert counts["node_indicators"] == expected[1]
    assert counts["node_fits"] == 5 * 9
    levels = con.execute("SELECT min(level), count(*) FROM node_indicators").fetchone()
    assert levels[0] == 0 and levels[1] == expected[1]
