"""Both groups (node ranking, failure prediction) materialize on a small generated trace,
with their blocking checks, on a real DuckDB file and an ephemeral Dagster instance."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from assets import failures, nodes, traces, warehouse
from assets.resources import PipelineSettings
from stragglers.nodes.truth import planted_machines


def read(data, sql: str) -> list[tuple]:
    with duckdb.connect(str(data / "warehouse.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def materialized(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    nurd = PipelineSettings(data_dir=str(data), synthetic_jobs=12, workers=1, node_fit_sample=6, node_min_tasks=5,
                        failure_trees=10, failure_max_train_rows=5000, clone_tasks=300)
    resources = {"nurd": nurd, "duckdb": DuckDBResource(database=str(data / "warehouse.duckdb"))}
    assets = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, nodes.task_attempts, nodes.node_ranking,
              failures.failure_inputs, failures.failure_prediction, failures.proactive_cloning]
    result = dg.materialize(assets + nodes.checks + failures.checks, resources=resources,
                            instance=dg.DagsterInstance.ephemeral())
    assert result.success
    return data, result


def test_node_ranking_materializes_with_checks(materialized):
    data, result = materialized
    checks = result.get_asset_check_evaluations()
    assert {c.check_name for c in checks} >= {"task_attempts_valid", "node_task_durations_valid",
                                              "node_indicators_valid"}
    assert all(c.passed for c in checks)
    # the replayed ground truth is the generated trace's machines
    ids = {r[0] for r in read(data, "SELECT machine_id FROM machines WHERE trace = 'synthetic'")}
    assert ids == set(planted_machines(seed=2011)["machine_id"])
    n_ranked, n_levels = read(data, "SELECT count(*), count(DISTINCT level) FROM node_indicators")[0]
    assert n_ranked > 0 and n_levels >= 1
    assert read(data, "SELECT count(DISTINCT machine_id) FROM node_fits")[0][0] == min(6, n_ranked)
    meta = result.asset_materializations_for_node("node_ranking")[0].metadata
    assert {"levels", "best_fit", "truth_checks", "plot_best_fit"} <= set(meta)
    assert (data / "reports" / "nodes" / "nodes_synthetic.md").exists()


def test_failure_group_materializes_with_checks(materialized):
    data, result = materialized
    names = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert {"failure_jobs_valid", "failure_tasks_valid", "failure_attempts_valid", "failure_predictions_valid",
            "cloning_tasks_valid"} <= set(names) and all(names.values())
    # every job with a scheduled task is an input, selected or not (failure prediction runs over ALL jobs)
    n_jobs, n_selected = read(data, """SELECT (SELECT count(*) FROM failure_jobs),
        (SELECT count(*) FROM failure_jobs f SEMI JOIN jobs j USING (trace, job_id))""")[0]
    assert n_jobs > n_selected > 0
    # the embedded trace has usage: a target runs in all four scenarios, or in none when this small
    # trace's training jobs hold one class only (said in the note, never a usage gap)
    per_target = dict(read(data, """SELECT target, count(DISTINCT scenario) FILTER (WHERE available)
        FROM failure_predictions GROUP BY target"""))
    assert set(per_target.values()) <= {0, 4} and per_target["attempt_failure"] == 4
    # (the note column exists only when some target is unavailable: generator 2 at this scale has none)
    if read(data, "SELECT count(*) FROM failure_predictions WHERE NOT available")[0][0]:
        notes = {r[0] for r in read(data, "SELECT DISTINCT note FROM failure_predictions WHERE NOT available")}
        assert all(n.startswith("one class only") for n in notes)
    assert read(data, "SELECT count(DISTINCT clones) FROM cloning_overhead")[0][0] == 3
    meta = result.asset_materializations_for_node("proactive_cloning")[0].metadata
    assert {"table_v", "headline", "plot_cdf"} <= set(meta)
    assert (data / "reports" / "failures" / "failures_synthetic_cloning.md").exists()
