"""What every stage's settings are made of: a pydantic model whose fields declare their default,
bounds, ``NURD_*`` variable and meaning once, and the one-line error a bad value gives.

Each stage (stragglers/traces, warehouse, prediction, diagnosis, nodes, failures) has its settings
as a ``StageSettings`` model in its module of this package (stragglers/settings/<stage>.py);
``stragglers/settings/__init__.py`` composes them.
The typed settings a stage's code takes (``SelectionSettings``, ``HoundSettings``, ...) are plain
frozen dataclasses whose fields are ``linked`` to a model's field: they take its default, are
checked by its declaration, and are filled from the composed settings by ``linked_values``.

Every bad value raises ``SettingError``: one line naming the variable (else the setting), the value,
what is allowed (read from the field's declaration) and, where there is one, the closest allowed value.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import typing
from typing import Any, Callable

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo


class SettingError(ValueError):
    """A setting has a value the pipeline cannot use."""


def closest_word(value, words, cutoff: float = 0.0) -> str | None:
    """The word of ``words`` nearest ``value`` by difflib's ratio (None when none reaches ``cutoff``)."""
    found = difflib.get_close_matches(str(value).strip().lower(), list(words), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(near) -> str:
    return "" if near is None else f"; did you mean {near!r}?"


@dataclasses.dataclass(frozen=True)
class Grammar:
    """A string setting with its own grammar (a list, a size, an address): ``check(value)`` returns
    None when the value is fine, else what is expected; ``closest(value)`` the allowed value nearest
    a rejected one (or None). Used as ``Annotated[str, Grammar(...)]``."""

    check: Callable[[Any], "str | None"]
    closest: Callable[[Any], Any] = lambda value: None

    def __get_pydantic_core_schema__(self, source, handler):
        from pydantic_core import core_schema

        def validate(value):
            expected = self.check(value)
            if expected:
                raise ValueError(expected)
            return value
        return core_schema.no_info_after_validator_function(validate, handler(source))


def setting(default, *, doc: str, env: str | None = None, **bounds) -> Any:
    """A settings field: its default, its bounds (pydantic's ``ge``, ``gt``, ``le``, ``lt``), its
    ``NURD_*`` variable and its meaning, each written here only."""
    # the description (shown by Dagster's launchpad) names the variable; errors and the README use the doc
    described = doc + (f" (environment: {env})" if env else "")
    return Field(default, description=described, json_schema_extra={"env": env, "doc": doc}, **bounds)


def env_of(info: FieldInfo) -> str | None:
    extra = info.json_schema_extra
    return extra.get("env") if isinstance(extra, dict) else None


def doc_of(info: FieldInfo) -> str:
    """What the setting means (``setting``'s ``doc``)."""
    extra = info.json_schema_extra
    return extra.get("doc", info.description or "") if isinstance(extra, dict) else (info.description or "")


class StageSettings(BaseModel):
    """A stage's settings. Strict: an integer setting takes no 2.0 nor True (an integer is a number)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    def __init__(self, **values):
        try:
            super().__init__(**values)
        except ValidationError as err:
            raise setting_error(type(self), err) from None

    def as_dict(self) -> dict:
        return self.model_dump()

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Setting -> its ``NURD_*`` variable, for the settings that have one."""
        return {name: env_of(info) for name, info in cls.model_fields.items() if env_of(info)}


# --------------------------------------------------------------------------- the one-line error
def _bounds(info: FieldInfo) -> dict[str, Any]:
    out = {}
    for m in info.metadata:
        for key in ("ge", "gt", "le", "lt"):
            if isinstance(m, getattr(annotated_types, key.capitalize())):
                out[key] = getattr(m, key)
    return out


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def expectation(info: FieldInfo, value) -> tuple[str, Any]:
    """(what the field allows, in words; the allowed value nearest ``value`` or None), read from its
    declaration: its grammar, its choices (``Literal``), or its type and bounds."""
    grammar = next((m for m in info.metadata if isinstance(m, Grammar)), None)
    if grammar is None and typing.get_origin(info.annotation) is typing.Annotated:
        grammar = next((m for m in typing.get_args(info.annotation)[1:] if isinstance(m, Grammar)), None)
    if grammar is not None:
        expected = grammar.check(value)
        return (expected, grammar.closest(value)) if expected else ("a string", None)
    if typing.get_origin(info.annotation) is typing.Literal:
        choices = typing.get_args(info.annotation)
        return f"one of {', '.join(repr(c) for c in choices)}", closest_word(value, choices)
    b = _bounds(info)
    if info.annotation is int:
        lo = b.get("ge", 0)
        return f"an integer >= {lo}", (max(lo, round(value)) if _number(value) else None)
    if info.annotation is float:
        if "gt" in b and not ({"le", "lt"} & set(b)):
            return f"a number > {b['gt']}", None
        lo, hi = b.get("ge", b.get("gt")), b.get("le", b.get("lt"))
        words = f"a number in {'(' if 'gt' in b else '['}{lo}, {hi}{')' if 'lt' in b else ']'}"
        if not _number(value):
            return words, None
        if value <= lo:   # an open bound has no closest allowed value: none is offered there
            return words, None if "gt" in b else lo
        return words, None if "lt" in b else hi
    if info.annotation is str:
        return "a string", None
    return str(info.annotation), None


def describe_value(model: type[BaseModel], name: str, value) -> str:
    """The one line for a bad ``value`` of setting ``name`` of ``model``."""
    info = model.model_fields[name]
    var = env_of(info)
    if info.annotation is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)   # shown as the number it is taken for
    expected, near = expectation(info, value)
    # the variable first (what a user typed), the setting's name too (what the run config calls it)
    return (f"setting {var or name}={value!r} is invalid: expected {expected}{did_you_mean(near)} "
            f"({f'{name}: ' if var else ''}{doc_of(info)})")


def setting_error(model: type[BaseModel], err: ValidationError) -> SettingError:
    """pydantic's error as the one line naming the first bad setting (a rule between settings
    raises its own SettingError inside a validator: its line is kept)."""
    first = err.errors()[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, SettingError):
        return cause
    if first["loc"] and first["loc"][0] in model.model_fields:
        return SettingError(describe_value(model, first["loc"][0], first["input"]))
    return SettingError(f"settings of {model.__name__} are invalid: {first['msg']} at {first['loc']}")


# --------------------------------------------------------------------------- typed settings linked to fields
def linked(model: type[BaseModel], name: str, *, from_run: bool = True) -> Any:
    """A dataclass field that is setting ``name`` of ``model``: its default is the model's, its value
    is checked by the model's declaration (``check_linked``) and, unless ``from_run=False`` (the
    field keeps the default whatever the run sets), filled by ``linked_values``."""
    if name not in model.model_fields:
        raise KeyError(f"{model.__name__} has no setting {name!r}")
    return dataclasses.field(default=model.model_fields[name].default,
                             metadata={"setting": (model, name), "from_run": from_run})


def constant(default, *, setting: str, choices: tuple | None = None, **bounds) -> Any:
    """A typed settings' internal constant (no variable or run config sets it): its default and its
    bounds (pydantic's ``ge``, ``gt``, ``le``, ``lt``; ``choices`` for a word), declared here once and
    checked by ``check_linked`` against the field's type (a tuple's bounds hold for each element,
    ``None`` passes where the type allows it). ``setting`` names it in the error's line."""
    return dataclasses.field(default=default, metadata={"constant": setting, "choices": choices, "bounds": bounds})


def _bounded(tp, bounds: dict, choices: tuple | None):
    """``tp`` with ``bounds`` on its numbers (each element of a tuple; the value of an optional)."""
    if choices is not None:
        return typing.Literal[choices]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        return tuple[_bounded(args[0], bounds, None), ...]
    if type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return typing.Optional[_bounded(inner, bounds, None)]
    # strict: an integer constant takes no 2.0 nor True, as the stages' settings
    return typing.Annotated[tp, Field(strict=tp is int, **bounds)]


def _constant_words(tp, bounds: dict, choices: tuple | None) -> str:
    if choices is not None:
        return f"one of {', '.join(repr(c) for c in choices)}"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        return _constant_words(args[0], bounds, None).replace("an integer", "integers").replace("a number", "numbers")
    if type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return "None or " + _constant_words(inner, bounds, None)
    kind = "an integer" if tp is int else "a number"
    if {"le", "lt"} & set(bounds) and {"ge", "gt"} & set(bounds):
        lo, hi = bounds.get("ge", bounds.get("gt")), bounds.get("le", bounds.get("lt"))
        return f"{kind} in {'(' if 'gt' in bounds else '['}{lo}, {hi}{')' if 'lt' in bounds else ']'}"
    ops = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    return " and ".join(f"{kind} {ops[k]} {v}" for k, v in bounds.items()) or kind


@functools.cache
def _constant_adapter(cls: type, name: str) -> tuple[TypeAdapter, str]:
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    tp = typing.get_type_hints(cls)[name]
    bounds, choices = f.metadata["bounds"], f.metadata["choices"]
    return TypeAdapter(_bounded(tp, bounds, choices)), _constant_words(tp, bounds, choices)


@functools.cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter:
    info = model.model_fields[name]
    return TypeAdapter(typing.Annotated[info.annotation, info], config=ConfigDict(strict=True))


def check_linked(obj) -> None:
    """Check every linked field of dataclass ``obj`` by its setting's declaration (a float setting
    given an integer becomes that float, as the models do), and every ``constant`` by its bounds."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if "constant" in f.metadata:
            adapter, words = _constant_adapter(type(obj), f.name)
            try:
                adapter.validate_python(value)
            except ValidationError:
                raise SettingError(f"setting {f.metadata['constant']}={value!r} is invalid: expected {words}") from None
            continue
        if "setting" not in f.metadata:
            continue
        model, name = f.metadata["setting"]
        try:
            checked = _adapter(model, name).validate_python(value)
        except ValidationError:
            raise SettingError(describe_value(model, name, value)) from None
        if checked is not value:
            object.__setattr__(obj, f.name, checked)


@dataclasses.dataclass(frozen=True)
class LinkedSettings:
    """The typed settings a stage's code takes: a frozen dataclass whose fields are ``linked`` settings
    (or ``constant``s). Once made, every field is checked by its declaration (``check_linked``: the
    run's settings by their models, the constants by their bounds), then every one of ``rules``, the
    rules between fields (functions of the settings that raise ``SettingError``), in their order."""

    rules: typing.ClassVar[tuple[Callable[[Any], None], ...]] = ()

    def __post_init__(self) -> None:
        check_linked(self)
        for rule in self.rules:
            rule(self)


def linked_values(cls, source) -> dict[str, Any]:
    """The values of ``cls``'s linked fields, taken from ``source`` (the composed settings)."""
    return {f.name: getattr(source, f.metadata["setting"][1]) for f in dataclasses.fields(cls)
            if "setting" in f.metadata and f.metadata["from_run"]}
