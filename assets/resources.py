"""The ``nurd`` resource (the run's settings, as Dagster config) and the ``duckdb`` warehouse resource.

``PipelineSettings`` is the stages' settings composed (``stragglers.settings.RUN_STAGES``): its
fields, their defaults, bounds, variables and descriptions are the stage models' (declared there
only). A field left out of a run's config takes its ``NURD_...`` variable when that is set, else
its default. The resource key stays ``nurd`` (docs/CONTRACT.md).

``WarehouseResource`` opens ``<data_dir>/warehouse.duckdb`` of the *run's* settings
(not of the environment at load time), with the run's DuckDB memory limit, threads
and spill directory: overriding ``data_dir`` in the launchpad moves the warehouse too.
"""

from __future__ import annotations

import sys
import typing
from contextlib import contextmanager
from pathlib import Path

import click
import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import ValidationError, model_validator

from stragglers.settings.diagnosis import HoundSettings
from stragglers.settings.failures import FailureSettings
from stragglers.settings.nodes import NodeSettings
from stragglers.settings.protocols import typed_settings
from stragglers.settings import (RUN_STAGES, EngineSettings, EvaluationSettings, SelectionSettings, SettingError,
                                 Settings, env_values)
from stragglers.settings.stage import setting_error
from stragglers.traces.fetch import SyntheticScale, alibaba_csv, trace_dir
from stragglers.warehouse.storage import storage_error
from stragglers.warehouse.writer import writer_lock


# the stages a run sets, composed (pydantic lists the bases' fields from the last base to the first)
class PipelineSettings(dg.ConfigurableResource, *reversed(RUN_STAGES)):
    """Every setting of a run (stragglers.settings.RUN_STAGES): where data lives, which trace, the
    protocol (docs/PROTOCOL.md), the evaluation, Hound, the node ranking, failure prediction and DuckDB."""

    def __init__(self, **values):
        try:
            super().__init__(**values)
        except ValidationError as err:
            raise setting_error(Settings, err) from None

    @model_validator(mode="before")
    @classmethod
    def _environment_for_the_fields_left_out(cls, values):
        # A run config that sets some fields rebuilds the resource from those alone: the others take
        # the environment's values (setting synthetic_seed in the launchpad must not send data_dir back
        # to "data" when NURD_DATA_DIR is set).
        if isinstance(values, dict):
            return {k: v for k, v in env_values(Settings).items() if k in cls.model_fields} | values
        return values

    def settings(self) -> Settings:
        """The validated settings of this run (raises SettingError naming the first bad one)."""
        return Settings(**{name: getattr(self, name) for name in type(self).model_fields})

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    @property
    def warehouse_path(self) -> Path:
        return self.settings().warehouse_path

    @property
    def raw_path(self) -> Path:
        """Where the trace's files are read (under data_dir, or in place: stragglers.traces.fetch.trace_dir)."""
        return trace_dir(self.data_dir, self.trace, self.trace_url)

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

    # Each stage's typed settings: views of this run's settings (SettingsView.of).
    def selection(self) -> SelectionSettings:
        return self._with_protocol()[1]

    def evaluation(self) -> EvaluationSettings:
        return self._with_protocol()[0]

    def _with_protocol(self) -> tuple[EvaluationSettings, SelectionSettings]:
        return typed_settings(self.settings())

    def engine(self) -> EngineSettings:
        return self.settings().engine()

    def hound(self) -> HoundSettings:
        """Hound's settings (stragglers/settings/diagnosis.py holds the ones not exposed here)."""
        s = self.settings()
        return HoundSettings.of(s, workers=s.resolved_workers)

    def nodes(self) -> NodeSettings:
        """Node-ranking settings (stragglers/settings/nodes.py holds the ones not exposed here)."""
        return NodeSettings.of(self.settings())

    def failures(self) -> FailureSettings:
        """Failure-prediction settings (stragglers/settings/failures.py holds the ones not exposed here)."""
        return FailureSettings.of(self.settings())


def settings_from_env(environ: typing.Mapping[str, str] | None = None) -> PipelineSettings:
    """The resource as the environment configures it; every value is validated now (fail fast:
    a bad NURD_... stops the code location from loading, naming the variable). The values are given
    as values, not ``EnvVar``: an ``EnvVar.int`` is 0 until the run resolves it, which the fields'
    bounds reject; a run's worker reads the same variables for the fields its config leaves out."""
    values = env_values(Settings, environ)
    Settings(**values)
    return PipelineSettings(**{k: v for k, v in values.items() if k in PipelineSettings.model_fields})


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
    ``connected`` (assets/common.py) sets the run's memory limit, threads and spill directory on every
    connection an asset or check opens (a plain ``get_connection`` would keep DuckDB's defaults).
    A run that uses it holds the warehouse's writer lock (stragglers/warehouse/writer.py) from
    start to end: a second writer fails at once, naming the run that holds it."""

    nurd: PipelineSettings
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
    forbidden disk: the cause first, the file, and what to do (stragglers.warehouse.storage.storage_error)."""
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
