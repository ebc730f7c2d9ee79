"""What every stage's settings are made of: a pydantic model whose fields declare their default,
bounds, ``NURD_*`` variable and meaning once, and the one-line error a bad value gives.

Each stage (stragglers/traces, warehouse, prediction, diagnosis, nodes, failures) has its settings
as a ``StageSettings`` model in its module of this package (stragglers/settings/<stage>.py);
``stragglers/settings/__init__.py`` composes them.
The typed settings a stage's code takes (``SelectionSettings``, ``HoundSettings``, ...) are
``SettingsView``s: frozen pydantic models whose fields are the stage models' own fields (``linked``:
the same annotation and ``FieldInfo``, so default, bounds, variable and meaning are declared once)
and their internal ``constant``s; ``View.of(settings)`` fills one from the composed settings.

Every bad value raises ``SettingError``: one line naming the variable (else the setting), the value,
what is allowed (read from the field's declaration) and, where there is one, the closest allowed value.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import sys
import typing
from typing import Any, Callable

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
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


def setting(default, *, doc: str | None = None, env: str | None = None, **bounds) -> Any:
    """A settings field: its default, its bounds (pydantic's ``ge``, ``gt``, ``le``, ``lt``), its
    ``NURD_*`` variable and its meaning, each written here only. The meaning is ``doc``, or, when it
    is longer than a line, the docstring under the field (``StageSettings`` reads it)."""
    if doc is None:
        return Field(default, json_schema_extra={"env": env}, **bounds)
    return Field(default, description=_described(doc, env), json_schema_extra={"env": env, "doc": doc}, **bounds)


def _described(doc: str, env: str | None) -> str:
    # the description (shown by Dagster's launchpad) names the variable; errors and the README use the doc
    return doc + (f" (environment: {env})" if env else "")


def env_of(info: FieldInfo) -> str | None:
    extra = info.json_schema_extra
    return extra.get("env") if isinstance(extra, dict) else None


def doc_of(info: FieldInfo) -> str:
    """What the setting means (``setting``'s ``doc``)."""
    extra = info.json_schema_extra
    return extra.get("doc", info.description or "") if isinstance(extra, dict) else (info.description or "")


class StageSettings(BaseModel):
    """A stage's settings. Strict: an integer setting takes no 2.0 nor True (an integer is a number)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs):
        """A ``setting`` documented by the docstring under it takes that as its meaning, in one line."""
        super().__pydantic_init_subclass__(**kwargs)
        for name, info in cls.model_fields.items():
            extra = info.json_schema_extra
            if not isinstance(extra, dict) or "env" not in extra or "doc" in extra:
                continue    # not a ``setting``, or its meaning already given
            if not info.description:
                raise TypeError(f"setting {name} of {cls.__name__} has no meaning: give doc= or a docstring under it")
            extra["doc"] = " ".join(info.description.split())
            info.description = _described(extra["doc"], extra["env"])

    def __init__(self, **values):
        try:
            super().__init__(**values)
        except ValidationError as err:
            raise setting_error(type(self), err, values) from None

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


def setting_error(model: type[BaseModel], err: ValidationError, values: dict | None = None) -> SettingError:
    """pydantic's error as the one line naming the first bad setting, with the value as given in
    ``values`` (a tuple, not its bad element); a rule between settings raises its own SettingError
    inside a validator: its line is kept."""
    first = err.errors()[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, SettingError):
        return cause
    field = first["loc"][0] if first["loc"] else None
    if values and field in values:
        first = first | {"input": values[field]}
    link = getattr(model, "_links", {}).get(field)
    if link is not None:   # a view's field: the line of the setting it is
        return SettingError(describe_value(link.model, link.name, first["input"]))
    if field in getattr(model, "_constants", {}):
        name, words = model._constants[field]
        return SettingError(f"setting {name}={first['input']!r} is invalid: expected {words}")
    if field in model.model_fields:
        return SettingError(describe_value(model, first["loc"][0], first["input"]))
    return SettingError(f"settings of {model.__name__} are invalid: {first['msg']} at {first['loc']}")


# --------------------------------------------------------------------------- typed settings: views of the models
@dataclasses.dataclass(frozen=True)
class _Link:
    model: type[BaseModel]
    name: str
    from_run: bool


@dataclasses.dataclass(frozen=True)
class _Constant:
    default: Any
    setting: str
    choices: tuple | None
    bounds: dict


def linked(model: type[BaseModel], name: str, *, from_run: bool = True) -> Any:
    """A field of a ``SettingsView`` that is setting ``name`` of stage model ``model``: written with no
    type, it takes the model's field as it is declared (type, default, bounds, variable, meaning) and,
    unless ``from_run=False`` (the field keeps the default whatever the run sets), ``of`` fills it."""
    if name not in model.model_fields:
        raise KeyError(f"{model.__name__} has no setting {name!r}")
    return _Link(model, name, from_run)


def constant(default, *, setting: str, choices: tuple | None = None, **bounds) -> Any:
    """A typed settings' internal constant (no variable or run config sets it): its default and its
    bounds (pydantic's ``ge``, ``gt``, ``le``, ``lt``; ``choices`` for a word), declared here once on the
    field's annotation (a tuple's bounds hold for each element, ``None`` passes where the type allows
    it). ``setting`` names it in the error's line."""
    return _Constant(default, setting, choices, bounds)


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
    return typing.Annotated[tp, Field(**bounds)]


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


def _same_named(models: tuple[type[BaseModel], ...], names: tuple[str, ...]) -> dict[str, _Link]:
    """``linked`` fields of the same names as settings of ``models`` (each declared by exactly one)."""
    links = {}
    for name in names:
        owners = [m for m in models if name in m.model_fields]
        if len(owners) != 1:
            raise KeyError(f"setting {name!r} is declared by {len(owners)} of "
                           f"{', '.join(m.__name__ for m in models)}; a view links exactly one")
        links[name] = _Link(owners[0], name, True)
    return links


class _ViewMeta(type(BaseModel)):
    """Builds a ``SettingsView``'s fields before pydantic sees the class: a ``linked`` field becomes
    the model's field (its annotation and ``FieldInfo``), a ``constant`` its bounded annotation; the
    fields keep the order the class writes them in. The class keywords ``models=`` and ``linked=``
    (setting names) link fields of the same names first, in their order."""

    def __new__(mcs, name, bases, namespace, models: tuple = (), linked: tuple = (), **kwargs):
        namespace = {**_same_named(models, linked), **namespace}
        written = dict(namespace.get("__annotations__", {}))
        module = sys.modules.get(namespace.get("__module__", ""))
        scope = vars(module) if module else {}
        annotations, links, constants = {}, {}, {}
        for key, value in list(namespace.items()):
            if isinstance(value, _Link):
                info = value.model.model_fields[value.name]
                annotations[key] = info.annotation
                namespace[key] = copy.copy(info)
                links[key] = value
            elif isinstance(value, _Constant):
                tp = written[key]
                tp = eval(tp, scope) if isinstance(tp, str) else tp   # the annotation as written
                annotations[key] = _bounded(tp, value.bounds, value.choices)
                namespace[key] = value.default
                constants[key] = (value.setting, _constant_words(tp, value.bounds, value.choices))
            elif key in written:
                annotations[key] = written[key]
        annotations |= {k: v for k, v in written.items() if k not in annotations}   # a field with no default
        namespace["__annotations__"] = annotations
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        for base in reversed(cls.__mro__[1:]):   # a view's links and constants include its bases'
            links = getattr(base, "_links", {}) | links
            constants = getattr(base, "_constants", {}) | constants
        type.__setattr__(cls, "_links", links)
        type.__setattr__(cls, "_constants", constants)
        return cls


class SettingsView(StageSettings, metaclass=_ViewMeta):
    """The typed settings a stage's code takes: a frozen pydantic model whose fields are the stage
    models' own (``linked``: declared there only) or its internal ``constant``s. A bad value is the
    one line of the setting it is (its variable, else its name), as from the stage's model; then every
    one of ``rules``, the rules between fields (functions of the settings that raise
    ``SettingError``), in their order."""

    # a default goes through the field's validators too (EvaluationSettings' workers=0 is resolved)
    model_config = ConfigDict(validate_default=True)

    rules: typing.ClassVar[tuple[Callable[[Any], None], ...]] = ()
    _links: typing.ClassVar[dict[str, _Link]] = {}
    _constants: typing.ClassVar[dict[str, tuple[str, str]]] = {}

    @model_validator(mode="after")
    def _rules_between_settings(self):
        for rule in self.rules:
            rule(self)
        return self

    @classmethod
    def of(cls, source, **overrides):
        """The view of ``source`` (the composed settings): each linked field the run sets, then
        ``overrides``."""
        return cls(**{field: getattr(source, link.name) for field, link in cls._links.items()
                      if link.from_run} | overrides)

    @classmethod
    def settings_of_fields(cls) -> dict[str, tuple[type[BaseModel], str]]:
        """Field -> (stage model, setting) for every linked field."""
        return {field: (link.model, link.name) for field, link in cls._links.items()}

    def replace(self, **changes):
        """A copy with ``changes``, checked as when made."""
        return type(self)(**{name: getattr(self, name) for name in type(self).model_fields} | changes)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in type(self).model_fields}
