"""Both groups (node ranking, failure prediction) materialize on a small generated trace,
with their blocking checks, on a real DuckDB file and an ephemeral Dagster instance."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from assets import nodes, traces, warehouse
from assets.resources import NurdSettings
from stragglers.nodes.truth import planted_machines


def read(data, sql: str) -> list[tuple]:
    with duckdb.connect(str(data / "warehouse.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def materialized(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    nurd = NurdSettings(data_dir=str(data), synthetic_jobs=10, workers=1, node_fit_sample=6, node_min_tasks=5)
    resources = {"nurd": nurd, "duckdb": DuckDBResource(database=str(data / "warehouse.duckdb"))}
    assets = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, nodes.task_attempts, nodes.node_ranking]
    result = dg.materialize(assets + nodes.checks, resources=resources, instance=dg.DagsterInstance.ephemeral())
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
