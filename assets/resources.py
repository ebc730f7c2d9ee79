"""The ``nurd`` resource (the settings, as Dagster config) and the ``duckdb`` warehouse resource.

``NurdSettings`` has one config field per run setting of ``stragglers.settings.Settings``,
generated from it: the default, the variable and the description are written there
only.  A field whose variable is set becomes an ``EnvVar`` (the UI shows where the
value came from); the launchpad / run config overrides any field.  ``settings()``
validates all of them at once, before any work.

``WarehouseResource`` opens ``<data_dir>/warehouse.duckdb`` of the *run's* settings
(not of the environment at load time), with the run's DuckDB memory limit, threads
and spill directory: overriding ``data_dir`` in the launchpad moves the warehouse too.
"""

from __future__ import annotations

import os
import sys
import typing
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import click
import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from stragglers.diagnosis.settings import HoundSettings
from stragglers.failures.settings import FailureSettings
from stragglers.nodes.settings import NodeSettings
from stragglers.prediction.protocol import typed_settings
from stragglers.settings import EngineSettings, EvaluationSettings, SelectionSettings, SettingError, Settings
from stragglers.warehouse.build import storage_error
from stragglers.warehouse.writer import writer_lock
from stragglers.traces.fetch import SyntheticScale, alibaba_csv, raw_dir

RUN_SETTINGS = [f for f in fields(Settings) if f.metadata["run"]]


class _SettingsViews:
    """Derived values; every field is a setting of ``Settings``."""

    def settings(self) -> Settings:
        """The validated settings of this run (raises SettingError naming the first bad one)."""
        return Settings(**{f.name: getattr(self, f.name) for f in RUN_SETTINGS})

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    @property
    def warehouse_path(self) -> Path:
        return self.settings().warehouse_path

    @property
    def raw_path(self) -> Path:
        return raw_dir(self.data_dir, self.trace)

    @property
    def alibaba_csv(self) -> Path:
        return alibaba_csv(self.data_dir, self.trace)

    @property
    def parts(self) -> int | str:
        return self.settings().parts

    @property
    def scale(self) -> SyntheticScale:
        return SyntheticScale(seed=self.synthetic_seed, n_jobs=self.synthetic_jobs, n_parts=self.synthetic_parts,
                              cause_mix=self.synthetic_cause_mix)

    # Each stage's typed settings, built here from the root model's values: the root settings module
    # imports no stage (tests/test_architecture.py), the glue may import them all.
    def selection(self) -> SelectionSettings:
        return self._with_protocol()[1]

    def evaluation(self) -> EvaluationSettings:
        return self._with_protocol()[0]

    def _with_protocol(self) -> tuple[EvaluationSettings, SelectionSettings]:
        return typed_settings(self.settings())

    def engine(self) -> EngineSettings:
        return self.settings().engine()

    def hound(self) -> HoundSettings:
        """Hound's settings (stragglers/diagnosis/settings.py holds the ones not exposed here)."""
        s = self.settings()
        return HoundSettings(min_tasks=s.hound_min_tasks, seed=s.seed, replicas=s.hound_replicas,
                             adaboost_rounds=s.hound_adaboost_rounds, words=s.hound_words,
                             node_min_tasks=s.node_min_tasks, workers=s.resolved_workers)

    def nodes(self) -> NodeSettings:
        """Node-ranking settings (stragglers/nodes/settings.py holds the ones not exposed here)."""
        s = self.settings()
        return NodeSettings(min_tasks_per_node=s.node_min_tasks, fit_sample_nodes=s.node_fit_sample,
                            interval=s.node_interval, seed=s.seed)

    def failures(self) -> FailureSettings:
        """Failure-prediction settings (stragglers/failures/settings.py holds the ones not exposed here)."""
        s = self.settings()
        return FailureSettings(trees=s.failure_trees, max_train_rows=s.failure_max_train_rows,
                               clone_retries=s.clone_retries, clones=s.clones, clone_tasks=s.clone_tasks,
                               seed=s.seed)


def _resource_class(defaults: Settings | None = None,
                    bases: tuple = (_SettingsViews, dg.ConfigurableResource)) -> type:
    """The resource class; ``defaults``: the values a field takes when a run's config leaves it
    out (the code defaults, or the environment's values, see ``settings_from_env``)."""
    hints = typing.get_type_hints(Settings)
    namespace: dict = {"__module__": __name__, "__annotations__": {}}
    for f in RUN_SETTINGS:
        namespace["__annotations__"][f.name] = hints[f.name]
        var = f.metadata["env"]
        namespace[f.name] = Field(default=f.default if defaults is None else getattr(defaults, f.name),
                                  description=f.metadata["doc"] + (f" (environment: {var})" if var else ""))
    namespace["__doc__"] = ("Every setting of the pipeline (stragglers.settings.Settings): where data lives, "
                            "which trace, the protocol (docs/PROTOCOL.md), the evaluation and DuckDB.")
    return type("NurdSettings", bases, namespace)


NurdSettings = _resource_class()


def settings_from_env(environ: typing.Mapping[str, str] | None = None) -> NurdSettings:
    """The resource as the environment configures it; every value is validated now (fail fast:
    a bad NURD_... stops the code location from loading, naming the variable)."""
    environ = os.environ if environ is None else environ
    from_env = Settings.from_env(environ)
    values = {}
    for f in RUN_SETTINGS:
        var = f.metadata["env"]
        if var and environ.get(var, "") != "":
            kind = typing.get_type_hints(Settings)[f.name]
            values[f.name] = dg.EnvVar.int(var) if kind is int else (
                dg.EnvVar.float(var) if kind is float else dg.EnvVar(var))
    # A run config that sets some fields of `nurd` rebuilds the resource from the class defaults,
    # so those defaults are the environment's values: setting synthetic_seed in the launchpad must
    # not send data_dir back to "data" when NURD_DATA_DIR is set.
    return _resource_class(from_env, bases=(NurdSettings,))(**values)


#: words of the Dagster commands that serve or execute runs for others (`dagster api grpc`, `dagster
#: code-server start`, a run worker `dagster api execute_run`, the UI): there a bad setting must not
#: stop the process, it fails each run instead
_SERVING_COMMANDS = {"api", "code-server", "dev", "dagster-webserver", "dagster-daemon"}


def stop_on_bad_setting(err: SettingError) -> None:
    """In a one-shot command (``dagster asset materialize``, ``dg launch``, ``dg check defs``), print the
    one line of ``err`` and exit 2 before any work; elsewhere (a server, a run worker, an import) return."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or _SERVING_COMMANDS & set(ctx.command_path.split()):
        return
    print(f"error: {err}", file=sys.stderr)
    sys.exit(2)


class InvalidSettings(dg.ConfigurableResource):
    """Stands for ``nurd`` and ``duckdb`` while a NURD_... value is invalid, where the definitions serve
    runs: each run fails at its start with the one line naming the value (no traceback of ours)."""

    error: str

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        raise dg.Failure(description=self.error, allow_retries=False)


class WarehouseResource(DuckDBResource):
    """DuckDB on ``<data_dir>/warehouse.duckdb`` of the run's ``nurd`` settings. The assets'
    ``prepare`` (assets/common.py) sets the run's memory limit, threads and spill directory.
    A run that uses it holds the warehouse's writer lock (stragglers/warehouse/writer.py) from
    start to end: a second writer fails at once, naming the run that holds it."""

    nurd: NurdSettings
    database: str = ""     # "" = the run's <data_dir>/warehouse.duckdb

    def _path(self) -> Path:
        return Path(self.database) if self.database else self.nurd.settings().warehouse_path

    @contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext):
        self.nurd.settings()    # every setting checked before any work (raises SettingError naming it)
        run_id = context.run_id or "(no run id)"
        selection = ""
        if context.dagster_run is not None and context.dagster_run.asset_selection:
            selection = "assets " + ", ".join(sorted(k.to_user_string() for k in context.dagster_run.asset_selection))
        with _storage_errors(self._path()), writer_lock(self._path(), run_id, selection):
            with super().yield_for_execution(context) as resource:
                yield resource

    @contextmanager
    def get_connection(self):
        path = self._path()
        with _storage_errors(path):   # the directory and the file can be opened for writing
            path.parent.mkdir(parents=True, exist_ok=True)
            duckdb.connect(str(path)).close()
        with DuckDBResource(database=str(path)).get_connection() as con:
            yield con


@contextmanager
def _storage_errors(path: Path):
    """Opening the warehouse (its directory, its writer lock, the DuckDB file) on a full, read-only or
    forbidden disk: the cause first, the file, and what to do (stragglers.warehouse.build.storage_error)."""
    try:
        yield
    except (OSError, duckdb.IOException, duckdb.PermissionException) as e:
        storage = storage_error(None, e, path)
        if storage is None:
            raise
        raise storage from e


def warehouse_path(data_dir: str | None = None) -> Path:
    """The warehouse of ``data_dir``, else of the environment's settings."""
    return Settings.from_env(**({"data_dir": data_dir} if data_dir else {})).warehouse_path
