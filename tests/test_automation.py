"""Re-runs when a trace changes: the observable source's data version and the
automation conditions of the downstream assets (real ephemeral instance)."""

from __future__ import annotations

import os
import shutil

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from assets import traces, warehouse
from assets.resources import PipelineSettings
from stragglers.traces.synth import generate_google
from stragglers.traces.fetch import SyntheticScale, source_version


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    root = tmp_path_factory.mktemp("bucket") / "clusterdata"
    generate_google(root, seed=5, n_jobs=10, n_parts=2)
    return root


def _touch_one_file(root):
    part = sorted((root / "task_usage").glob("part-*.csv.gz"))[-1]
    part.write_bytes(part.read_bytes())  # same bytes, new mtime
    st = part.stat()
    os.utime(part, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_data_version_changes_when_one_file_changes_and_not_otherwise(mirror, tmp_path):
    v1 = source_version("google_2011", tmp_path, url=str(mirror))
    assert v1 == source_version("google_2011", tmp_path, url=str(mirror))
    assert v1 == source_version("google_2011", tmp_path, url=mirror.as_uri())
    _touch_one_file(mirror)
    v2 = source_version("google_2011", tmp_path, url=str(mirror))
    assert v2 != v1 and v2 == source_version("google_2011", tmp_path, url=str(mirror))
    # embedded trace: generator version + seed + scale
    a = source_version("synthetic", tmp_path, scale=SyntheticScale(seed=1))
    assert a == source_version("synthetic", tmp_path, scale=SyntheticScale(seed=1))
    assert a != source_version("synthetic", tmp_path, scale=SyntheticScale(seed=2))


def test_missing_source_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="NURD_TRACE_URL"):
        source_version("google_2011", tmp_path, url=str(tmp_path / "nowhere"))


def test_new_data_version_requests_downstream_runs(mirror, tmp_path):
    local = tmp_path / "mirror"
    shutil.copytree(mirror, local)
    res = {"nurd": PipelineSettings(data_dir=str(tmp_path / "data"), trace="google_2011", trace_url=str(local),
                                trace_parts="all", workers=1),
           "duckdb": DuckDBResource(database=str(tmp_path / "data" / "warehouse.duckdb"))}
    assets = [traces.trace_source, traces.raw_trace, warehouse.staged_trace, warehouse.jobs]
    defs = dg.Definitions(assets=assets, jobs=[traces.observe_trace_source], resources=res)
    instance = dg.DagsterInstance.ephemeral()

    def observe():
        r = defs.resolve_job_def("observe_trace_source").execute_in_process(instance=instance)
        assert r.success
        obs = instance.get_latest_data_version_record(traces.trace_source.key)
        return obs.asset_observation.tags.get("dagster/data_version") if obs else None

    v1 = observe()
    assert dg.materialize(assets[1:], resources=res, instance=instance).success
    first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert first.total_requested == 0

    # no change: a new observation with the same version requests nothing
    assert observe() == v1
    same = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
    assert same.total_requested == 0

    # the main command run again on the unchanged trace: nothing rebuilt, and automation launches nothing
    again = dg.materialize(assets[1:], resources=res, instance=instance)
    assert again.success
    jobs_meta = [m for m in again.asset_materializations_for_node("jobs")][0].metadata
    assert jobs_meta["rebuilt"].value is False
    same = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=same.cursor)
    assert same.total_requested == 0

    _touch_one_file(local)
    assert observe() != v1
    changed = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=same.cursor)
    requested = {r.key.to_user_string() for r in changed.results if r.true_subset.size}
    assert requested == {"raw_trace", "staged_trace", "jobs"}  # the whole chain below the source


def test_automation_is_on_by_default():
    from pipeline import defs
    sensor = defs.resolve_sensor_def("nurd_automation")
    schedule = defs.resolve_schedule_def("observe_trace_sources")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert schedule.cron_schedule == "0 4 * * *"
