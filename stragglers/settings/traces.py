"""The traces stage's settings: where data lives, which trace and which of its parts, the embedded
trace's size, and the observation of the trace source (read when the definitions load)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from stragglers.settings.stage import Grammar, StageSettings, closest_word, setting
from stragglers.trace_formats import TRACES

#: The embedded trace's hand-made jobs (one per situation the tests name: docs/SYNTHETIC_TRACE.md);
#: they come first, so the setting needs at least one more. The generator reads the count here.
SYNTHETIC_SPECIAL_JOBS = 9

#: The embedded generator's cause mixes (the generator's CAUSE_MIXES gives each its skew share):
#: 'hound' is Hound's published mix, the embedded trace; 'reexecution_fit' the variant whose skew share
#: is fitted to the real re-executions (docs/SYNTHETIC_TRACE.md, "Cause mixes").
SYNTHETIC_CAUSE_MIXES = ("hound", "reexecution_fit")

# --------------------------------------------------------------------------- NURD_TRACE_PARTS
# The grammar of the setting lives with it (the downloader, stragglers/traces/google_parts.py, uses it).
#: The scheduler's event tables: what an events-only evaluation of the whole month needs
#: (NURD_TRACE_PARTS=events; about 1.2 GB of the trace's 41 GB, docs/TRACES.md).
EVENT_TABLES: tuple[str, ...] = ("job_events", "task_events", "machine_events")
_RANGE_RE = re.compile(r"^(\d+)-(\d+)$")


def _parts_error(value) -> ValueError:
    return ValueError(
        f"NURD_TRACE_PARTS must be 'all', 'events' (every part of {', '.join(EVENT_TABLES)}), a positive "
        f"integer N (parts 0..N-1 of every table), or "
        f"per-table selections like 'task_events=0-13,job_events=all' (each value 'all', N or A-B; a bare "
        f"N or 'all' among them applies to the tables not named), got {value!r}")


def _parse_one_spec(text: str, value) -> int | str | tuple[int, ...]:
    text = text.strip().lower()
    if text == "all":
        return "all"
    m = _RANGE_RE.match(text)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        if a > b:
            raise _parts_error(value)
        return tuple(range(a, b + 1))
    try:
        n = int(text)
    except ValueError:
        raise _parts_error(value) from None
    if n < 1:
        raise _parts_error(value)
    return n


def parse_parts(value: str | int) -> int | str | dict:
    """Validate a ``NURD_TRACE_PARTS`` value.

    ``"all"`` or a positive integer N apply to every table (parts 0..N-1).
    ``"events"`` is every part of the event tables (``EVENT_TABLES``) and nothing else.
    Per-table selections ``table=SPEC`` separated by commas (SPEC ``all``, N or
    an inclusive range ``A-B``) give a dict {table: spec}; a bare ``N`` / ``all``
    item among them is the spec of the tables not named (key ``"*"``); without
    one, tables not named are not fetched.
    """
    if isinstance(value, bool):
        raise _parts_error(value)
    if isinstance(value, dict):   # already parsed
        return value
    if isinstance(value, int):
        if value < 1:
            raise _parts_error(value)
        return value
    text = str(value).strip()
    if text.lower() == "events":
        return {table: "all" for table in EVENT_TABLES}
    if "=" not in text:
        spec = _parse_one_spec(text, value)
        if isinstance(spec, tuple):
            raise _parts_error(value)   # a bare range names no table
        return spec
    out: dict = {}
    for item in text.split(","):
        table, eq, spec = item.partition("=")
        table = table.strip()
        key = table if eq else "*"
        spec_text = spec if eq else table
        if (eq and not re.fullmatch(r"[a-z_]+", table)) or key in out:
            raise _parts_error(value)
        parsed = _parse_one_spec(spec_text, value)
        if key == "*" and isinstance(parsed, tuple):
            raise _parts_error(value)
        out[key] = parsed
    return out


def parts_spec(v) -> str | None:
    """Google parts: "all", "events", a positive integer N (parts 0..N-1 of every table), or per-table
    selections such as "task_events=0-13,job_events=all" (``parse_parts``)."""
    try:
        parse_parts(v)
    except ValueError:
        return ("'all', 'events' or a positive integer (or per-table selections such as "
                "'task_events=0-13,job_events=all')")
    return None


def _closest_parts(v) -> str | None:
    """A keyword near the value ('event' -> 'events'), else 1 for a count below 1."""
    text = str(v).strip()
    if "=" in text:
        return None
    if re.fullmatch(r"-?\d+", text):
        return "1"
    return closest_word(text, ("all", "events"), cutoff=0.5)   # a value far from both is a malformed list


def nonempty(v) -> str | None:
    return None if isinstance(v, str) and v.strip() else "a non-empty string"


def cron(v) -> str | None:
    return None if isinstance(v, str) and len(v.split()) == 5 else "a 5-field cron expression such as '0 4 * * *'"


TraceName = Literal[TRACES]


class TraceSettings(StageSettings):
    data_dir: Annotated[str, Grammar(nonempty)] = setting(
        "data", env="NURD_DATA_DIR", doc="downloads, the warehouse (warehouse.duckdb) and the reports live here")
    trace: TraceName = setting("synthetic", env="NURD_TRACE", doc="the trace to run on")
    trace_url: str = setting("", env="NURD_TRACE_URL", doc="the trace's source; '' = its public location")
    trace_parts: Annotated[str, Grammar(parts_spec, _closest_parts)] = setting("2", env="NURD_TRACE_PARTS")
    """Google parts: a count N (parts 0..N-1 of every table), 'all', 'events' (every part of job_events, task_events
    and machine_events), or per table, e.g. 'task_events=0-13,job_events=all' (tables not named are not fetched
    unless a bare N or 'all' is given)"""
    download_workers: int = setting(4, ge=1, doc="parallel downloads")
    synthetic_seed: int = setting(2011, ge=0, doc="seed of the embedded trace generator")
    synthetic_jobs: int = setting(48, env="NURD_SYNTHETIC_JOBS", ge=SYNTHETIC_SPECIAL_JOBS + 1,
                                  doc="jobs of the embedded trace")
    synthetic_parts: int = setting(8, ge=1, doc="parts per table of the embedded trace")
    synthetic_cause_mix: Literal[SYNTHETIC_CAUSE_MIXES] = setting("hound", env="NURD_SYNTHETIC_CAUSE_MIX")
    """the embedded trace's cause mix: 'hound' (Hound's published mix) or 'reexecution_fit' (skew fitted to the real
    re-executions, a variant)"""


class ObservationSettings(StageSettings):
    """Read when the definitions load (the schedule and the sensors), not settings of a run."""

    automation: Literal["on", "off"] = setting("on", env="NURD_AUTOMATION",
                                               doc="'off' starts the schedule and the automation sensor stopped")
    observe_cron: Annotated[str, Grammar(cron)] = setting("0 4 * * *", env="NURD_OBSERVE_CRON",
                                                          doc="when the trace source is observed")
