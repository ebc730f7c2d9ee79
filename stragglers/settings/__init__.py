"""The pipeline's settings: the stages' settings composed, and read from the environment.

Every stage's settings live in this package, below every stage (a stage's code reads its settings;
the settings read no stage): one module per stage, one pydantic field per setting with its default,
bounds, ``NURD_*`` variable and meaning (stragglers/settings/stage.py says how):

- ``TraceSettings``, ``ObservationSettings`` (stragglers/settings/traces.py),
- ``WarehouseSettings`` (stragglers/settings/warehouse.py),
- ``PredictionSettings`` (stragglers/settings/prediction.py),
- ``DiagnosisSettings`` (Hound), ``NodeRankingSettings``, ``FailurePredictionSettings``.

``Settings`` is all of them in one model; ``Settings.from_env()`` reads the ``NURD_...`` variables.
The Dagster resource ``nurd`` (assets/resources.py) composes the same stage models (``RUN_STAGES``).
The typed settings the stages' code takes (``SelectionSettings``, ``EvaluationSettings``,
``EngineSettings``, Hound's, ...) are frozen views of these models (``SettingsView``): their fields
are the models' own fields, not declared again, and ``View.of(settings)`` fills one from this model.
Every bad value raises ``SettingError``: one line naming the variable, the value, what is allowed and
the closest allowed value.
"""

from __future__ import annotations

import os
import typing
from pathlib import Path
from typing import Any, Mapping

from pydantic import model_validator

from stragglers.settings.diagnosis import DiagnosisSettings
from stragglers.settings.failures import FailurePredictionSettings
from stragglers.settings.nodes import NodeRankingSettings
from stragglers.settings.prediction import EngineSettings, EvaluationSettings, PredictionSettings
from stragglers.settings.stage import SettingError, StageSettings, did_you_mean, doc_of, env_of, expectation
from stragglers.trace_formats import FORMATS
from stragglers.settings.traces import ObservationSettings, TraceSettings, parse_parts
from stragglers.settings.warehouse import SelectionSettings, WarehouseSettings

__all__ = ["Settings", "SettingError", "SelectionSettings", "EvaluationSettings", "EngineSettings", "RUN_STAGES",
           "default", "describe"]

#: The stages' settings a run sets, in the order the README's table lists them (the Dagster resource
#: composes these); ``ObservationSettings`` are read when the definitions load.
RUN_STAGES: tuple[type[StageSettings], ...] = (TraceSettings, WarehouseSettings, PredictionSettings,
                                                DiagnosisSettings, NodeRankingSettings, FailurePredictionSettings)
STAGES = RUN_STAGES + (ObservationSettings,)


# pydantic lists the fields of a model with several bases from the last base to the first
class Settings(*reversed(STAGES)):
    """Every setting of every stage."""

    @model_validator(mode="after")
    def _feature_set_of_the_trace(self):
        if self.feature_set != "auto":
            try:
                FORMATS[self.trace].feature_set(self.feature_set)
            except ValueError as err:
                raise SettingError(str(err)) from None
        return self

    # ---- derived values
    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    @property
    def warehouse_path(self) -> Path:
        return Path(self.data_dir) / "warehouse.duckdb"

    @property
    def parts(self) -> int | str | dict:
        return parse_parts(self.trace_parts)

    @property
    def resolved_workers(self) -> int:
        return self.workers or (os.cpu_count() or 1)

    def engine(self) -> EngineSettings:
        return EngineSettings(dask_address=self.dask_address, batch_jobs=self.batch_jobs,
                              exchange_dir=self.exchange_dir or str(Path(self.data_dir) / "exchange"))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides) -> Settings:
        """Defaults, then the ``NURD_...`` variables that are set (non-empty), then ``overrides``."""
        return cls(**(env_values(cls, environ) | overrides))


def env_values(model: type[StageSettings], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings of ``model`` whose ``NURD_...`` variable is set (non-empty) in ``environ``, converted
    to the setting's type (a number that does not parse is a SettingError naming the variable)."""
    environ = os.environ if environ is None else environ
    values = {}
    for name, info in model.model_fields.items():
        var = env_of(info)
        if var and environ.get(var, "") != "":
            values[name] = _parse(info, var, environ[var])
    return values


def _parse(info, var: str, raw: str):
    kind = info.annotation
    if kind not in (int, float):
        return raw
    try:
        return kind(raw.strip())
    except ValueError:
        near = None
        if kind is int:   # '5.0' or '1e3': the integer it reads as, checked against the bounds
            try:
                near = expectation(info, round(float(raw)))[1]
            except (ValueError, OverflowError):
                near = None
        raise SettingError(f"setting {var}={raw!r} is invalid: expected {'an integer' if kind is int else 'a number'}"
                           f"{did_you_mean(near)} ({doc_of(info)})") from None


def default(name: str):
    """The default of setting ``name``."""
    return Settings.model_fields[name].default


def describe(every: bool = False) -> str:
    """docs/SETTINGS.md's table: every ``NURD_*`` variable, stage by stage, with its default and
    meaning as the models declare them (tests/test_readme.py compares; scripts/settings_table.py writes
    it); ``every``: every setting, with its bounds, whether or not a variable sets it."""
    rows = (["| setting | variable | default | allowed | meaning |", "|---|---|---|---|---|"] if every else
            ["| variable | default | meaning |", "|---|---|---|"])
    for stage in STAGES:
        for name, info in stage.model_fields.items():
            var = env_of(info)
            shown = f"`{info.default}`" if info.default != "" else "(empty)"
            meaning = doc_of(info)
            choices = typing.get_args(info.annotation) if typing.get_origin(info.annotation) is typing.Literal else ()
            if choices and not all(f"'{c}'" in meaning for c in choices):
                meaning += f"; one of {', '.join(f'`{c}`' for c in choices)}"
            if every:
                rows.append(f"| `{name}` | {f'`{var}`' if var else ''} | {shown} | "
                            f"{expectation(info, None)[0]} | {meaning} |")
            elif var:
                rows.append(f"| `{var}` | {shown} | {meaning} (`{name}`) |")
    return "\n".join(rows)
