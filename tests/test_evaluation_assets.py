"""The reference rules as baseline_eval partitions, comparison_tables with earliness and the
reference band, and the protocol ablation, on a small generated trace (real Dagster runs on
an ephemeral instance, a real DuckDB file)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest
from dagster_duckdb import DuckDBResource

from assets import budgets, completion, prediction, reports, traces, warehouse
from assets.resources import PipelineSettings
from stragglers.prediction.evaluation.ablation import protocol_ablation
from stragglers.settings.protocols import AUTHORS, ours_value
from stragglers.reports.compute.budget_tables import budget_tables
from stragglers.reports.compute.budget_tables import BUDGET_TABLES

CHAIN = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
         warehouse.checkpoint_features]
RULES = ("flag_all", "wait_for_tau", "spark_speculation")
# what the report needs, in the order a run materializes it, and what it depends on
REPORT_STEPS = [completion.completion_times, budgets.operator_budgets, reports.comparison_tables]
UPSTREAM = [prediction.nurd_eval, prediction.baseline_eval]


def read(data: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(data / "warehouse.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


def resources(data_dir: Path, **settings) -> dict:
    return {"nurd": PipelineSettings(data_dir=str(data_dir), synthetic_jobs=10, workers=1, n_boot=20, **settings),
            "duckdb": DuckDBResource(database=str(data_dir / "warehouse.duckdb"))}


@pytest.fixture(scope="module")
def warehouse_ready(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    instance = dg.DagsterInstance.ephemeral()
    assert dg.materialize(CHAIN, resources=resources(data), instance=instance).success
    return data, instance


def assert_report_alone_refuses(data: Path, instance, res: dict, table: str, asset: str) -> None:
    """With flag_all's rows of ``table`` deleted (restored after), comparison_tables alone fails
    with a message naming ``asset``, the one to materialize with it."""
    with duckdb.connect(str(data / "warehouse.duckdb")) as con:
        con.execute(f"CREATE TABLE kept AS SELECT * FROM {table}; DELETE FROM {table} WHERE method = 'flag_all'")
    try:
        stale = dg.materialize(REPORT_STEPS + UPSTREAM, selection=[reports.comparison_tables], resources=res,
                               instance=instance, raise_on_error=False)
        assert not stale.success
        message = stale.get_step_failure_events()[0].event_specific_data.error.to_string()
        assert f"materialize asset {asset}" in message
        del stale
        gc.collect()      # the failed step's frames held its DuckDB connection
    finally:
        with duckdb.connect(str(data / "warehouse.duckdb")) as con:
            con.execute(f"DELETE FROM {table}; INSERT INTO {table} SELECT * FROM kept; DROP TABLE kept")


def test_rules_partitions_and_comparison_tables(warehouse_ready):
    data, instance = warehouse_ready
    res = resources(data)
    for rule in RULES:
        assert dg.materialize([prediction.baseline_eval], partition_key=rule, resources=res,
                              instance=instance).success
    r = dg.materialize(REPORT_STEPS + UPSTREAM, selection=REPORT_STEPS, resources=res, instance=instance)
    assert r.success
    # job_metrics: every rule on every job, with f1_auc in [0, 1]; wait_for_tau flags at the last
    # checkpoint before tau, so its F1 over time is F1 from the first k/10 point at or after that
    # checkpoint on, 0 before: f1_auc = F1 * (number of such points) / 10 (2 on the 'equal' grid)
    rows = read(data, """WITH last AS (SELECT job_id, max(checkpoint_s) AS c, any_value(t0_s) AS t0,
                                              any_value(tau_s) AS tau FROM job_checkpoints GROUP BY job_id),
                              m AS (SELECT job_id, count(*) AS n FROM last, range(1, 11) r(k)
                                    WHERE t0 + (tau - t0) * k / 10 + 1e-6 >= c GROUP BY job_id)
                         SELECT method, count(*), min(f1_auc), max(f1_auc), avg(abs(f1_auc - f1 * m.n / 10))
                         FROM job_metrics JOIN m USING (job_id) GROUP BY method ORDER BY method""")
    got = {m: (n, lo, hi, dev) for m, n, lo, hi, dev in rows}
    assert set(got) == set(RULES)
    n_jobs = got["flag_all"][0]
    assert n_jobs >= 3 and all(got[m][0] == n_jobs for m in got)
    assert all(0 <= got[m][1] <= got[m][2] <= 1 for m in got)
    assert got["wait_for_tau"][3] == pytest.approx(0, abs=1e-12)
    # flag_all flags at t1: its lead is the largest of the rules wherever both have a true positive
    leads = dict(read(data, "SELECT method, median(median_lead) FROM job_metrics GROUP BY method"))
    assert leads["flag_all"] > leads["wait_for_tau"]
    comp = read(data, "SELECT method, f1, f1_auc, median_lead, completion_unlimited FROM comparison")
    assert {m for m, *_ in comp} == set(RULES)
    assert all(v is not None for row in comp for v in row[:3]) and all(row[4] is not None for row in comp)
    report = (data / "reports" / "report.md").read_text()
    assert "Accuracy, earliness and completion time" in report and "median lead" in report
    assert "Spearman correlation" in report
    assert "reference" in report and "Spark speculation" in report
    assert (data / "reports" / "accuracy_vs_earliness.png").stat().st_size > 1000
    # the report's completion table is the simulation asset's table, row for row
    with duckdb.connect(str(data / "warehouse.duckdb"), read_only=True) as con:
        sim = con.table("completion_times").df()
    pd.testing.assert_frame_equal(pd.read_csv(data / "reports" / "completion.csv"), sim, check_dtype=False)
    # nothing changed upstream: the simulations are not run again
    again = dg.materialize([completion.completion_times, prediction.nurd_eval, prediction.baseline_eval],
                           selection=[completion.completion_times], resources=res, instance=instance)
    assert again.asset_materializations_for_node("completion_times")[0].metadata["rebuilt"].value is False
    # the evaluations changed since the simulations ran: the report alone refuses, naming the asset to run
    assert_report_alone_refuses(data, instance, res, "job_metrics", "completion_times")


def test_budgets_are_read_by_the_report_as_computed(warehouse_ready, tmp_path):
    """operator_budgets computes every method at every budget once; comparison_tables reads the tables
    back with the computation's dtypes (its report files are the computation's, byte for byte), and
    alone refuses budgets older than the operator's sweep."""
    data, instance = warehouse_ready
    res = resources(data)
    for rule in RULES:
        assert dg.materialize([prediction.baseline_eval], partition_key=rule, resources=res,
                              instance=instance).success
    assert dg.materialize(REPORT_STEPS + UPSTREAM, selection=REPORT_STEPS, resources=res, instance=instance).success
    with duckdb.connect(str(data / "warehouse.duckdb"), read_only=True) as con:
        computed = dict(zip(BUDGET_TABLES, budget_tables(con, res["nurd"].settings())))
    # ten generated jobs: none has the verdict's warm-up of jobs ended before it started, so nothing is
    # tuned or named (the report says so in its answer box); every method's sweep is computed
    assert len(computed["sweep_curve"]) and not len(computed["matched_budgets"])
    assert "too few jobs to answer" in (data / "reports" / "report.md").read_text()
    for name, df in computed.items():
        if not len(df):      # an empty table is not a file of the report
            assert not (data / "reports" / f"{name}.csv").exists(), name
            continue
        df.to_parquet(tmp_path / f"{name}.parquet", index=False)
        df.to_csv(tmp_path / f"{name}.csv", index=False)
        for suffix in (".parquet", ".csv"):
            assert (data / "reports" / f"{name}{suffix}").read_bytes() == (tmp_path / f"{name}{suffix}").read_bytes()
    # current: not computed again
    again = dg.materialize([budgets.operator_budgets, *UPSTREAM], selection=[budgets.operator_budgets],
                           resources=res, instance=instance)
    assert again.asset_materializations_for_node("operator_budgets")[0].metadata["rebuilt"].value is False
    # the operator's sweep changed since the budgets were computed: the report alone refuses, naming the asset
    assert_report_alone_refuses(data, instance, res, "operator_capped_outcomes", "operator_budgets")


def test_protocol_ablation_rows_record_their_settings(warehouse_ready):
    """The ablation on the real warehouse, with the rules only (cheap; the assets run NURD too)."""
    data, instance = warehouse_ready
    # the main evaluation of wait_for_tau, which "ours" is compared with (current if another test made it)
    assert dg.materialize([prediction.baseline_eval], partition_key="wait_for_tau", resources=resources(data),
                          instance=instance).success
    nurd = PipelineSettings(data_dir=str(data), synthetic_jobs=10, workers=1)
    with duckdb.connect(str(data / "warehouse.duckdb")) as con:
        table = protocol_ablation(con, "synthetic", nurd.evaluation(), nurd.selection(), "hbos", max_jobs=3,
                                  methods=RULES)
        # the reference-feature variants were built in temporary tables, dropped afterwards
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone()[0] == 0
    variants = list(dict.fromkeys(table["variant"]))
    assert variants[0] == "authors" and variants[-1] == "ours" and len(variants) == len(AUTHORS) + 2
    assert len(table) == len(variants) * len(RULES) and (table["n_jobs"] == 3).all()
    for row in table.itertuples():
        s = json.loads(row.settings)
        assert 0 <= row.f1 <= 1 and s["max_jobs"] == 3
        if row.variant == "authors":
            assert all(s[k] == v for k, v in AUTHORS.items())
        if row.variant == "ours":
            assert s["alpha"] == 0.5 and s["feature_mode"] == "observed" and s["horizon"] == "tau"
    by = table.set_index(["variant", "method"])
    # the rules read no features and no alpha: those switches leave them unchanged
    for name in ("alpha", "feature_mode", "regressor", "latency_normalization"):
        switched = f"authors, {name}={ours_value(name)}"
        assert by.loc[(switched, "wait_for_tau"), "f1"] == by.loc[("authors", "wait_for_tau"), "f1"]
    # our protocol's rows equal the main evaluation's (same jobs, same replay)
    main = dict(read(data, "SELECT job_id, f1 FROM job_metrics WHERE method = 'wait_for_tau' ORDER BY job_id"))
    first3 = [main[j] for j in sorted(main)[:3]]
    assert by.loc[("ours", "wait_for_tau"), "f1"] == pytest.approx(sum(first3) / 3)


def test_evaluation_reruns_when_a_method_hyperparameter_changes(warehouse_ready, monkeypatch):
    # the up-to-date check covers the method's hyperparameters, not only the settings: a changed
    # default in the code (here NURD's boosting rounds) must re-run the evaluation, not keep stale rows
    from stragglers.prediction.methods import nurd as nurd_method
    data, instance = warehouse_ready
    res = resources(data)

    def rebuilt() -> bool:
        r = dg.materialize([prediction.nurd_eval], resources=res, instance=instance)
        assert r.success
        return r.asset_materializations_for_node("nurd_eval")[0].metadata["rebuilt"].value

    rebuilt()
    assert rebuilt() is False
    monkeypatch.setitem(nurd_method.XGBOOST_DEFAULTS, "n_estimators", 21)
    assert rebuilt() is True
    assert read(data, "SELECT count(DISTINCT job_id) FROM job_metrics WHERE method = 'nurd'")[0][0] >= 3


def test_deleted_result_rows_are_not_up_to_date(warehouse_ready):
    # results, not records: a record in table_settings alone does not make an evaluation current
    data, instance = warehouse_ready
    res = resources(data)

    def run() -> bool:
        r = dg.materialize([prediction.baseline_eval], partition_key="wait_for_tau", resources=res, instance=instance)
        assert r.success
        return r.asset_materializations_for_node("baseline_eval")[0].metadata["rebuilt"].value

    run()
    before = read(data, "SELECT count(*) FROM job_metrics WHERE method = 'wait_for_tau'")[0][0]
    assert before > 0 and run() is False
    with duckdb.connect(str(data / "warehouse.duckdb")) as con:
        con.execute("DELETE FROM job_metrics WHERE method = 'wait_for_tau'")
    assert run() is True
    assert read(data, "SELECT count(*) FROM job_metrics WHERE method = 'wait_for_tau'")[0][0] == before


def test_sensitivity_is_kept_while_current_and_rerun_when_its_settings_change(warehouse_ready):
    # the ablations keep their books like the evaluations (stragglers/warehouse/freshness.py): the same
    # inputs run nothing and leave the rows; another max_jobs re-runs and records it
    data, instance = warehouse_ready

    def run(max_jobs: int) -> bool:
        r = dg.materialize([prediction.nurd_sensitivity], resources=resources(data, ablation_max_jobs=max_jobs),
                           instance=instance)
        assert r.success
        return r.asset_materializations_for_node("nurd_sensitivity")[0].metadata["rebuilt"].value

    assert run(2) is True
    rows = read(data, "SELECT * FROM nurd_sensitivity ORDER BY ALL")
    assert rows and run(2) is False
    assert read(data, "SELECT * FROM nurd_sensitivity ORDER BY ALL") == rows
    assert run(1) is True
    assert {n for (n,) in read(data, "SELECT DISTINCT n_jobs FROM nurd_sensitivity")} == {1}
    assert json.loads(read(data, "SELECT settings FROM table_settings WHERE table_name = 'nurd_sensitivity'")[0][0]
                      )["max_jobs"] == 1
