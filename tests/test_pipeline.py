"""The Dagster pipeline end to end on real components: a real DuckDB file,
real `materialize` runs on an ephemeral instance, the embedded trace."""

from __future__ import annotations

import gzip
import hashlib
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest
from dagster_duckdb import DuckDBResource

from assets import budgets, completion, prediction, reports, traces, warehouse
from pipeline import defs
from assets.resources import PipelineSettings
from stragglers.reports.page.style import display_name

CHAIN = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
         warehouse.checkpoint_features, prediction.nurd_eval]


def read(data: Path, sql: str) -> list[tuple]:
    """Query the warehouse read-only and close at once (a lingering read-only connection
    would block the next run's writer in this process)."""
    with duckdb.connect(str(data / "warehouse.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


def resources(data_dir: Path, **settings) -> dict:
    return {"nurd": PipelineSettings(data_dir=str(data_dir), synthetic_jobs=10, workers=1, n_boot=50, **settings),
            "duckdb": DuckDBResource(database=str(data_dir / "warehouse.duckdb"))}


def test_definitions_load():
    dg.Definitions.validate_loadable(defs)
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"nurd_eval", "baseline_eval", "comparison_tables", "checkpoint_features", "jobs", "tasks"} <= keys


def test_every_asset_and_check_says_what_it_is():
    """An asset's description is its function's docstring; a check's, its GX suite's summary line."""
    graph = defs.resolve_asset_graph()
    undescribed = [k.to_user_string() for k in graph.get_all_asset_keys()
                   if not graph.get(k).description]
    assert undescribed == []
    checks = {spec.key.name: spec.description for a in graph.assets_defs for spec in a.check_specs}
    assert [name for name, description in checks.items() if not description] == []
    assert checks["failure_jobs_valid"] == "One row per job, n_tasks >= 1, job end event a terminal event where known."


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(CHAIN + warehouse.checks, resources=resources(data), instance=instance)
    assert result.success
    return data, instance, result


def test_chain_materializes_and_validates(evaluated):
    data, _, result = evaluated
    checks = result.get_asset_check_evaluations()
    assert len(checks) == 6 and all(c.passed for c in checks)
    n_jobs = read(data, "SELECT count(*) FROM jobs WHERE trace = 'synthetic'")[0][0]
    methods = dict(read(data, "SELECT method, count(*) FROM job_metrics GROUP BY method"))
    assert n_jobs >= 3
    assert set(methods) == {"nurd", "nurd_nc", "gbtr"}
    assert len(set(methods.values())) == 1 and 0 < methods["nurd"] <= n_jobs
    # every prediction belongs to a task running at t0 of a selected job
    orphans = read(data, """SELECT count(*) FROM predictions p ANTI JOIN tasks t
        ON t.trace = p.trace AND t.job_id = p.job_id AND t.task_id = p.task_id""")[0][0]
    assert orphans == 0
    mat = result.asset_materializations_for_node("nurd_eval")[0]
    assert "metrics" in mat.metadata and "nurd" in mat.metadata["metrics"].value
    assert (data / "validation" / "index.html").exists()
    # counts print as integers in the UI (they used to show as 17703.000)
    funnel = result.asset_materializations_for_node("selection_funnel")[0].metadata["funnel"].value
    assert str(n_jobs) in funnel and ".000" not in funnel


def test_baseline_partition_and_comparison_over_two_traces(evaluated):
    data, instance, _ = evaluated
    res = resources(data)
    r = dg.materialize([prediction.baseline_eval], partition_key="hbos", resources=res, instance=instance,
                       selection=[prediction.baseline_eval])
    assert r.success
    # a second trace in the same warehouse: the embedded Alibaba-format trace
    ali = resources(data, trace="synthetic_alibaba", alibaba_steps=8)
    assert dg.materialize(CHAIN + warehouse.checks, resources=ali, instance=instance).success
    r = dg.materialize([completion.completion_times, budgets.operator_budgets, reports.comparison_tables,
                        prediction.nurd_eval, prediction.baseline_eval],
                       selection=[completion.completion_times, budgets.operator_budgets,
                                  reports.comparison_tables], resources=res,
                       instance=instance)
    assert r.success
    rows = set(read(data, "SELECT trace, method FROM comparison"))
    assert rows == {("synthetic", m) for m in ("nurd", "nurd_nc", "gbtr", "hbos")} | \
        {("synthetic_alibaba", m) for m in ("nurd", "nurd_nc", "gbtr")}
    report = (data / "reports" / "report.md").read_text()
    for name in ("nurd", "nurd_nc", "gbtr", "hbos"):      # the report shows methods by their display names
        assert display_name(name) in report, display_name(name)
    assert "synthetic_alibaba" in report
    # one row per trace in the section "Traces": what it is and which features its methods saw
    traces = pd.read_csv(data / "reports" / "traces.csv").set_index("trace")
    assert traces.loc["synthetic", "data"] == "generated (embedded)" and traces.loc["synthetic", "methods"] == 4
    assert traces.loc["synthetic", "features"] == traces.loc["synthetic_alibaba", "features"] == "usage"
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    # the answer box first, then the operator's evidence, the paper's reproduction, the appendices (the traces)
    assert headings[:4] == ["## What this run shows",
                            "## The operator's evidence: what copies buy for the machine time they cost",
                            "## Reproducing the paper", "## Appendices"]
    appendix = report.split("## Appendices")[1]
    assert any(line.startswith("### Table") and line.endswith("Traces") for line in appendix.splitlines())
    pngs = list((data / "reports").glob("*.png"))
    assert len(pngs) >= 4 and all(p.stat().st_size > 1000 for p in pngs)
    for table in ("table3", "f1_over_time", "completion"):
        assert (data / "reports" / f"{table}.csv").stat().st_size > 0
        assert (data / "reports" / f"{table}.parquet").exists()
    meta = r.asset_materializations_for_node("comparison_tables")[0].metadata
    assert "hbos" in meta["table3"].value and any(k.startswith("plot_") for k in meta)
    # the UI shows the story first: the operator's answer at every budget and its figure, the operator's
    # single-point view and its Pareto figure, the paper's headline table, the key figure, the report's page
    # (3 jobs of each trace: none has the verdict's warm-up of earlier jobs, so no budget curves)
    assert list(meta)[:6] == ["answer", "operator_view", "operator_pareto", "headline", "key_plot_f1_over_time",
                              "report_html"] and "budget_curves" not in meta
    # the answer box of each trace, as report.md opens with it
    assert meta["answer"].value.startswith("### synthetic (generated trace, 3 jobs): too few jobs to answer")
    assert "### synthetic_alibaba (generated trace" in meta["answer"].value
    assert "| NURD " in meta["operator_view"].value and "data:image/png;base64," in meta["operator_pareto"].value
    assert "| NURD " in meta["headline"].value and "data:image/png;base64," in meta["key_plot_f1_over_time"].value
    assert meta["report_html"].value == (data / "reports" / "report.html").resolve().as_uri()
    assert "data:image/png;base64," in (data / "reports" / "report.html").read_text()


def _tampered_bucket(src: Path, dst: Path) -> Path:
    """A copy of a Google-format trace with one impossible event type, SHA256SUM updated."""
    shutil.copytree(src, dst)
    part = sorted((dst / "task_events").glob("part-*.csv.gz"))[0]
    lines = gzip.decompress(part.read_bytes()).decode().splitlines()
    fields = lines[0].split(",")
    fields[5] = "9"  # event type 9 does not exist
    lines[0] = ",".join(fields)
    part.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
    sums = []
    for line in (dst / "SHA256SUM").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        sums.append(f"{hashlib.sha256((dst / name).read_bytes()).hexdigest()}  {name}")
    (dst / "SHA256SUM").write_text("\n".join(sums) + "\n")
    return dst


def test_failing_expectation_blocks_downstream(evaluated, tmp_path):
    data, _, _ = evaluated
    mirror = _tampered_bucket(data / "raw" / "synthetic", tmp_path / "mirror")
    res = resources(tmp_path / "d", trace="google_2011", trace_url=str(mirror), trace_parts="all")
    result = dg.materialize(CHAIN + warehouse.checks, resources=res, instance=dg.DagsterInstance.ephemeral(),
                            raise_on_error=False)
    assert not result.success
    failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
    assert [c.check_name for c in failed] == ["raw_task_events_valid"]
    assert "event_type" in failed[0].metadata["summary"].value
    materialized = {m.asset_key.to_user_string() for m in result.get_asset_materialization_events()
                    and [e.event_specific_data.materialization for e in result.get_asset_materialization_events()]}
    assert "staged_trace" in materialized and "jobs" not in materialized and "nurd_eval" not in materialized


def test_project_instance_config_loads(tmp_path):
    """README points DAGSTER_HOME at dagster_home/: its dagster.yaml must be valid."""
    import shutil
    home = tmp_path / "home"
    shutil.copytree(Path(__file__).resolve().parents[1] / "dagster_home", home)
    instance = dg.DagsterInstance.from_config(str(home))
    config = instance.get_concurrency_config()
    assert config.run_queue_config.max_concurrent_runs == 1
    assert config.pool_config.default_pool_limit == 1


def test_partition_range_runs_in_one_run(evaluated):
    """`--partition-range` runs several methods in one run (single-run backfill policy):
    the asset reads context.partition_keys."""
    data, instance, _ = evaluated
    job = dg.Definitions(assets=[prediction.baseline_eval], resources=resources(data)).resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(instance=instance, tags={
        "dagster/asset_partition_range_start": "hbos", "dagster/asset_partition_range_end": "iforest"})
    assert result.success
    keys = sorted(m.partition for m in result.asset_materializations_for_node("baseline_eval"))
    assert keys == ["hbos", "iforest"]
    got = {m for (m,) in read(data, "SELECT DISTINCT method FROM evaluation_runs")}
    assert {"hbos", "iforest", "nurd", "gbtr", "nurd_nc"} <= got


def test_google_only_systems_say_not_applicable_on_another_format(tmp_path):
    """Hound, node ranking, failure prediction, trace_realism and reexecutions read the Google
    tables: on an Alibaba-format trace each asset succeeds with a note saying why, writes no table,
    and its checks pass as not applicable."""
    from assets import diagnosis, failures, nodes, realism

    google_only = [*diagnosis.assets, nodes.task_attempts, nodes.node_ranking, failures.failure_inputs,
                   failures.failure_prediction, failures.proactive_cloning, realism.trace_realism,
                   realism.reexecutions]
    google_only = [a for a in google_only if a is not diagnosis.hound_validation]   # its own rule: below
    checks = [c for c in [*diagnosis.checks, *nodes.checks, *failures.checks, *realism.checks]
              if c.check_key.name != "hound_validation_valid"]
    result = dg.materialize(google_only + checks, resources=resources(tmp_path, trace="synthetic_alibaba"),
                            instance=dg.DagsterInstance.ephemeral())
    assert result.success
    asset_notes = {}
    for asset in google_only:
        notes = [m.metadata["note"].value for m in result.asset_materializations_for_node(asset.op.name)]
        assert notes and notes[0].startswith("not applicable to synthetic_alibaba: "), (asset.op.name, notes)
        asset_notes[asset.key] = notes[0]
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == len(checks)
    # a check says what its asset says: the rule and its reason are declared once, on the asset
    assert all(e.passed and e.metadata["note"].value == asset_notes[e.asset_key] for e in evaluations)
    assert not (tmp_path / "warehouse.duckdb").exists() or not read(
        tmp_path, "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'hound%' OR table_name LIKE 'node%'")
