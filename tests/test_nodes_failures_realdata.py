"""Node ranking and the config-only failure predictor on the real Google 2011 events
(job_events, machine_events, task_events parts 0-13; no task_usage), with counts
checked against independent DuckDB queries over the raw files. Skipped, with the
reason, where the excerpt is absent."""

from __future__ import annotations

import duckdb
import pytest

from stragglers.failures.build import build_failure_inputs, load
from stragglers.failures.predict import TARGET_BY_NAME, evaluate
from stragglers.settings.failures import FailureSettings
from stragglers.nodes.build import build_attempts, build_node_ranking
from stragglers.settings.nodes import NodeSettings
from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_jobs
from stragglers.warehouse.sql_files import create_view, sql_path_literal
from stragglers.warehouse.staging import create_google_view

SENTINEL = 2**63 - 1


TASK_PARTS = 4   # of the 14 task_events parts: keeps the test at ~30 s on 2 cores


@pytest.fixture(scope="module")
def real(realdata, tmp_path_factory):
    # a partial mirror of the excerpt, by symbolic links: complete job_events and machine_events,
    # the first TASK_PARTS task_events parts (a partial mirror is a normal situation)
    tmp = tmp_path_factory.mktemp("real")
    raw = tmp / "google_2011"
    (raw / "task_events").mkdir(parents=True)
    for table in ("job_events", "machine_events"):
        (raw / table).symlink_to(realdata / "google_2011" / table, target_is_directory=True)
    for part in sorted((realdata / "google_2011" / "task_events").glob("part-*.csv.gz"))[:TASK_PARTS]:
        (raw / "task_events" / part.name).symlink_to(part)
    s = SelectionSettings(trace="google_2011")
    con = duckdb.connect(str(tmp / "w.duckdb"))
    # the events only (this excerpt has no task_usage): the staging views the pipeline uses
    for table in ("job_events", "task_events"):
        create_google_view(con, table, raw.resolve())
    create_view(con, "stg_task_event_parts", **(s.sql_params() | {"raw_dir": sql_path_literal(raw.resolve())}))
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
    counts = build_node_ranking(con, s, NodeSettings(min_tasks_per_node=5, fit_sample_nodes=5), log=lambda m: None)
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
               (SELECT count(*) FROM (SELECT machine FROM kept GROUP BY machine HAVING count(*) >= 5))
        """).fetchone()
    assert expected[0] > 1000
    assert counts["node_task_durations"] == expected[0]
    assert counts["node_indicators"] == expected[1] > 20
    assert counts["node_fits"] == 5 * 9
    levels = con.execute("SELECT min(level), count(*) FROM node_indicators").fetchone()
    assert levels[0] == 0 and levels[1] == expected[1]


def test_config_only_failure_prediction_on_real_events(real):
    con, raw, s = real
    settings = FailureSettings(sampling_ratios=(0.0,), max_train_rows=20_000)
    counts = build_failure_inputs(con, s, settings)
    assert counts["early_usage"] == 0          # no task_usage in the excerpt
    # independent: jobs with a scheduled task, by the last terminal job event (ties: larger type)
    te, je = raw_events(raw, "task_events"), raw_events(raw, "job_events")
    expected = dict(con.execute(f"""
        WITH sched AS (SELECT DISTINCT job_id FROM {te} WHERE ev = 1),
        last AS (SELECT job_id, arg_max(ev, {{'t': time, 'e': ev}}) AS ev FROM {je}
                 WHERE ev BETWEEN 2 AND 6 GROUP BY job_id)
        SELECT coalesce(l.ev, -1), count(*) FROM sched LEFT JOIN last l USING (job_id) GROUP BY 1""").fetchall())
    assert counts["failure_jobs"] == sum(expected.values())
    got = dict(con.execute("SELECT coalesce(job_end_event, -1), count(*) FROM failure_jobs GROUP BY 1").fetchall())
    assert got == expected
    jobs = load(con, "failure_jobs", s.trace)
    targets = [TARGET_BY_NAME["job_kill"], TARGET_BY_NAME["job_failure"]]
    curves, _, summary = evaluate({"failure_jobs": jobs}, settings, targets=targets)
    assert summary.set_index("target").loc["job_failure", "unknown_outcome"] == expected.get(-1, 0)
    # the usage scenarios are reported unavailable, the others have a curve over every threshold
    unavailable = curves[~curves.available.astype(bool)]
    assert set(unavailable.scenario) == {"config+usage", "all"}
    config = curves[(curves.scenario == "config") & curves.available.astype(bool)]
    assert len(config) == 2 * len(settings.thresholds)
    assert config.precision.between(0, 1).all() and config.recall.between(0, 1).all()
    # job kills are predictable from configuration alone (the paper's Fig. 7)
    kill = config[(config.target == "job_kill") & (config.threshold == 0.5)].iloc[0]
    assert kill.precision > 0.8 and kill.recall > 0.5
