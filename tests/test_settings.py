"""One settings model: defaults, variables and checks written once (stragglers/settings/__init__.py)."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from assets import traces, warehouse
from assets.resources import PipelineSettings, WarehouseResource, settings_from_env
from stragglers.settings.diagnosis import HoundSettings
from stragglers.settings.failures import FailureSettings
from stragglers.settings.nodes import NodeSettings
from stragglers.settings import (RUN_STAGES, STAGES, EngineSettings, EvaluationSettings, SelectionSettings, Settings,
                                 SettingError)
from stragglers.warehouse.freshness import recorded_settings
from stragglers.warehouse.suites import DEFAULT_PARAMS


def test_every_default_is_the_models():
    model = Settings()
    resource = PipelineSettings()
    assert set(PipelineSettings.model_fields) == set(Settings.model_fields) - {"automation", "observe_cron"}
    for name in PipelineSettings.model_fields:
        assert getattr(resource, name) == getattr(model, name), name
    for sub in (SelectionSettings(), EvaluationSettings(workers=1)):
        for name in type(sub).model_fields:
            if name != "workers":
                assert getattr(sub, name) == getattr(model, name), name
    assert DEFAULT_PARAMS["min_tasks"] == model.min_tasks == 100
    assert DEFAULT_PARAMS["quantile"] == model.quantile


def test_public_variables_are_kept():
    env = set(Settings.variables().values())
    assert {"NURD_DATA_DIR", "NURD_TRACE", "NURD_TRACE_URL", "NURD_TRACE_PARTS", "NURD_SEED", "NURD_WORKERS",
            "NURD_FEATURE_MODE", "NURD_SYNTHETIC_JOBS", "NURD_DUCKDB_MEMORY_LIMIT", "NURD_AUTOMATION",
            "NURD_OBSERVE_CRON", "NURD_ON_BAD_ROWS"} <= env


@pytest.mark.parametrize("var, value, message", [
    ("NURD_TRACE", "nonsense", "setting NURD_TRACE='nonsense' is invalid: expected one of 'synthetic'"),
    ("NURD_TRACE_PARTS", "abc", "setting NURD_TRACE_PARTS='abc' is invalid: expected 'all', 'events' or a positive integer"),
    ("NURD_FEATURE_MODE", "bogus", "setting NURD_FEATURE_MODE='bogus' is invalid: expected one of 'observed'"),
    ("NURD_SEED", "x1", "setting NURD_SEED='x1' is invalid: expected an integer"),
    ("NURD_WORKERS", "-1", "setting NURD_WORKERS=-1 is invalid: expected an integer >= 0"),
    ("NURD_DUCKDB_MEMORY_LIMIT", "lots", "setting NURD_DUCKDB_MEMORY_LIMIT='lots' is invalid: expected a size"),
    ("NURD_ON_BAD_ROWS", "skip", "setting NURD_ON_BAD_ROWS='skip' is invalid: expected one of 'fail', 'quarantine'"),
    ("NURD_OBSERVE_CRON", "daily", "setting NURD_OBSERVE_CRON='daily' is invalid: expected a 5-field cron"),
])
def test_a_bad_variable_is_named_before_any_work(var, value, message):
    with pytest.raises(SettingError) as e:
        Settings.from_env({var: value})
    assert message in str(e.value)
    with pytest.raises(SettingError, match=var):
        settings_from_env({var: value})   # what pipeline/definitions.py does when it loads


def test_rules_between_settings_and_run_config_are_checked():
    with pytest.raises(SettingError, match=r"initial_fraction=0\.95 is invalid: expected a number below quantile"):
        Settings(initial_fraction=0.95)
    with pytest.raises(SettingError, match="min_tasks=1 is invalid"):
        PipelineSettings(min_tasks=1).settings()
    assert Settings.from_env({"NURD_SEED": "7"}, n_boot=5).seed == 7


def test_launchpad_data_dir_moves_the_warehouse_and_tables_record_their_settings(tmp_path):
    """The warehouse follows the run's data_dir (not the environment when definitions loaded)."""
    nurd = PipelineSettings(data_dir=str(tmp_path / "elsewhere"), synthetic_jobs=10, synthetic_parts=2, min_tasks=10)
    res = {"nurd": nurd, "duckdb": WarehouseResource(nurd=nurd)}
    result = dg.materialize([traces.trace_source, traces.raw_trace, warehouse.staged_trace, warehouse.jobs],
                            resources=res, instance=dg.DagsterInstance.ephemeral(),
                            selection=[traces.raw_trace, warehouse.staged_trace, warehouse.jobs])
    assert result.success
    db = tmp_path / "elsewhere" / "warehouse.duckdb"
    assert db.exists()
    with duckdb.connect(str(db), read_only=True) as con:
        built = recorded_settings(con, "jobs", "synthetic")
    assert built["min_tasks"] == 10 and built["quantile"] == 0.9 and built["feature_mode"] == "observed"


def test_a_partial_run_config_keeps_the_environments_other_settings(tmp_path, monkeypatch):
    """Setting one field of `nurd` in the launchpad (here synthetic_seed) rebuilds the resource
    from its class defaults; those must be the environment's values, else NURD_DATA_DIR was
    silently replaced by "data" and the run wrote its trace in the working directory."""
    monkeypatch.setenv("NURD_DATA_DIR", str(tmp_path / "from_env"))
    monkeypatch.setenv("NURD_HOUND_MIN_TASKS", "50")
    seen = {}

    @dg.asset
    def probe(nurd: PipelineSettings):
        s = nurd.settings()
        seen.update(data_dir=s.data_dir, seed=s.synthetic_seed, hound_min_tasks=s.hound_min_tasks, quantile=s.quantile)

    for run_config, seed in (({"resources": {"nurd": {"config": {"synthetic_seed": 7}}}}, 7), ({}, 2011)):
        assert dg.materialize([probe], resources={"nurd": settings_from_env()}, run_config=run_config,
                              instance=dg.DagsterInstance.ephemeral()).success
        assert seen == dict(data_dir=str(tmp_path / "from_env"), seed=seed, hound_min_tasks=50, quantile=0.9)


def test_feature_set_the_trace_lacks_is_a_setting_error():
    """NURD_FEATURE_SET names the columns every method sees; a set the trace's format has no
    columns for stops before any work, naming the setting and the trace."""
    assert Settings(trace="synthetic", feature_set="all").feature_set == "all"
    with pytest.raises(SettingError, match=r"feature_set='events' is invalid for trace alibaba_2018"):
        Settings(trace="alibaba_2018", feature_set="events")
    with pytest.raises(SettingError, match="NURD_FEATURE_SET"):
        settings_from_env({"NURD_FEATURE_SET": "both"})


def test_each_stage_owns_its_settings_and_the_root_only_composes_them():
    """Every setting is declared by exactly one stage's model; the root model and the Dagster resource
    have exactly the stages' fields (the resource: those a run sets)."""
    declared = [name for stage in STAGES for name in stage.model_fields]
    assert len(declared) == len(set(declared))
    assert set(Settings.model_fields) == set(declared)
    assert set(PipelineSettings.model_fields) == {name for stage in RUN_STAGES for name in stage.model_fields}
    # one module per stage in the settings package, none in the composing root
    assert sorted(stage.__module__ for stage in STAGES) == [f"stragglers.settings.{m}" for m in (
        "diagnosis", "failures", "nodes", "prediction", "traces", "traces", "warehouse")]


@pytest.mark.parametrize("typed", [SelectionSettings, EvaluationSettings, EngineSettings, HoundSettings,
                                   NodeSettings, FailureSettings])
def test_typed_settings_take_defaults_and_bounds_from_the_models(typed):
    """A typed setting of a stage's code that a run sets is its model's field, declared there only: the
    same type, default, bounds and meaning, and the view of the composed settings has the run's values."""
    linked = typed.settings_of_fields()
    assert linked
    for name, (model, setting) in linked.items():
        ours, theirs = typed.model_fields[name], model.model_fields[setting]
        assert (ours.annotation, ours.default, ours.metadata, ours.description) == (
            theirs.annotation, theirs.default, theirs.metadata, theirs.description), name
        assert setting in Settings.model_fields
    run = Settings(seed=7, min_tasks=50, n_boot=9, batch_jobs=3, hound_replicas=2, node_fit_sample=4, clones=2)
    view = typed.of(run)
    for name, (_, setting) in linked.items():
        if name != "workers":   # 0 = one per core, resolved by the evaluation's view
            assert getattr(view, name) == getattr(run, setting), name


def test_a_view_links_settings_by_name_or_says_which_it_cannot():
    from stragglers.settings.prediction import PredictionSettings
    from stragglers.settings.stage import SettingsView, linked
    from stragglers.settings.warehouse import WarehouseSettings

    class ByName(SettingsView, models=(PredictionSettings, WarehouseSettings), linked=("seed", "quantile")):
        eps = linked(PredictionSettings, "eps")

    class Written(SettingsView):
        seed = linked(PredictionSettings, "seed")
        quantile = linked(WarehouseSettings, "quantile")
        eps = linked(PredictionSettings, "eps")

    assert ByName.settings_of_fields() == Written.settings_of_fields()
    assert list(ByName.model_fields) == ["seed", "quantile", "eps"]
    assert ByName.of(Settings(seed=3, quantile=0.8)).as_dict() == {"seed": 3, "quantile": 0.8, "eps": 0.05}
    with pytest.raises(KeyError, match="'sede' is declared by 0 of PredictionSettings, WarehouseSettings"):
        class Misspelt(SettingsView, models=(PredictionSettings, WarehouseSettings), linked=("sede",)):
            pass


def test_a_setting_means_its_doc_or_the_docstring_under_it_in_one_line():
    from stragglers.settings.stage import StageSettings, doc_of, setting

    class Stage(StageSettings):
        short: int = setting(1, doc="a short meaning")
        long: int = setting(2, env="NURD_LONG_ONE")
        """a meaning longer
        than a line"""

    assert doc_of(Stage.model_fields["short"]) == "a short meaning"
    assert doc_of(Stage.model_fields["long"]) == "a meaning longer than a line"
    assert Stage.model_fields["long"].description == "a meaning longer than a line (environment: NURD_LONG_ONE)"
    with pytest.raises(TypeError, match="setting silent of Silent has no meaning"):
        class Silent(StageSettings):
            silent: int = setting(3)


def test_a_bound_is_checked_by_the_declaration_wherever_the_value_comes_from():
    line = "setting NURD_HOUND_MIN_TASKS=3 is invalid: expected an integer >= 5; did you mean 5?"
    for make in (lambda: HoundSettings(min_tasks=3), lambda: Settings(hound_min_tasks=3),
                 lambda: PipelineSettings(hound_min_tasks=3), lambda: Settings.from_env({"NURD_HOUND_MIN_TASKS": "3"})):
        with pytest.raises(SettingError) as e:
            make()
        assert str(e.value).startswith(line) and "\n" not in str(e.value)
    with pytest.raises(SettingError, match=r"NURD_PROTOCOL='operatr' is invalid: .*did you mean 'operator'\?"):
        PipelineSettings(protocol="operatr")   # a launchpad value
    with pytest.raises(SettingError, match=r"setting node_fit_sample=-1 is invalid: expected an integer >= 0"):
        NodeSettings(fit_sample_nodes=-1)


@pytest.mark.parametrize("typed, values, line", [
    (HoundSettings, {"trim": 0.5}, "setting hound_trim=0.5 is invalid: expected a number in [0, 0.5)"),
    (HoundSettings, {"ssw_min_grid": 2.0}, "setting hound_ssw_min_grid=2.0 is invalid: expected an integer >= 2"),
    (HoundSettings, {"ssw_sign_tol": -1}, "setting hound_ssw_sign_tol=-1 is invalid: expected None or a number >= 0"),
    (HoundSettings, {"profile_weights": "sharee"},
     "setting hound_profile_weights='sharee' is invalid: expected one of 'strength', 'share'"),
    (NodeSettings, {"confidence": 1.0}, "setting node_confidence=1.0 is invalid: expected a number in [0.5, 1)"),
    (FailureSettings, {"thresholds": (0.1, 1.0)},
     "setting thresholds=(0.1, 1.0) is invalid: expected numbers in (0, 1)"),
])
def test_a_constant_is_checked_by_the_bounds_on_its_field(typed, values, line):
    """The typed settings' internal constants declare their bounds on the field (``constant``), like the
    stages' settings: one line names the constant, and values inside the bounds pass."""
    with pytest.raises(SettingError) as err:
        typed(**values)
    assert str(err.value) == line
    name = next(iter(values))
    assert getattr(typed(**{name: getattr(typed(), name)}), name) == getattr(typed(), name)
