"""One TraceFormat per trace: the facts that differ between traces live there only."""

from __future__ import annotations

import re

import pytest

from stragglers import SQL_DIR
from stragglers.reports.sections.paper import PAPER_TRACE
from stragglers.settings import SelectionSettings, SettingError
from stragglers.trace_formats import FORMATS, RAW_COLUMNS, trace_format
from stragglers.traces.download import default_trace_url
from stragglers.traces.fetch import FETCHERS
from stragglers.traces.synth.formats import ALIBABA_BATCH_INSTANCE_COLUMNS, GOOGLE_SCHEMA


def _final_select_columns(sql: str) -> list[str]:
    """The output columns of the SQL file's last top-level SELECT (plain names or `x AS name`)."""
    sql = re.sub(r"--[^\n]*", "", sql)   # comments
    last = sql[[m.start() for m in re.finditer(r"\nSELECT\s", sql)][-1]:]
    body = last[len("\nSELECT "):re.search(r"\nFROM ", last).start()]
    items, depth, cur = [], 0, ""
    for ch in body.replace("\n", " "):                  # commas outside parentheses
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    cols = []
    for item in items + [cur]:
        item = item.strip()
        # every column of a joined table at once (COLUMNS(x.* EXCLUDE (...)) inside an expression)
        star = re.search(r"COLUMNS\(\w+\.(\* EXCLUDE \([^()]*\))\)", item)
        cols.append(star.group(1) if star else re.split(r"\s+AS\s+", item, flags=re.I)[-1].split(".")[-1].strip())
    return cols


@pytest.mark.parametrize("name", [n for n, f in FORMATS.items() if f.columns])
def test_feature_sql_produces_exactly_the_declared_features(name):
    fmt = trace_format(name)
    sql = (SQL_DIR / f"{fmt.sql_name('checkpoint_features', SQL_DIR)}.sql").read_text()
    cols = _final_select_columns(sql)
    keys = ["trace", "job_id", "task_id", "k", "checkpoint_s", "is_finished"]
    assert cols[:len(keys)] == keys
    # the usage features by name, then the event features (if any) as event_features.sql names them
    events = ["* EXCLUDE (job_id, task_id, k)"] if fmt.event_features else []
    assert tuple(cols[len(keys):]) == fmt.features + tuple(events)
    if fmt.event_features:
        cols = _final_select_columns((SQL_DIR / "event_features.sql").read_text())
        assert tuple(cols) == ("trace", "job_id", "task_id", "k", "at_us") + fmt.event_features


def test_feature_mode_applies_or_is_rejected():
    for name, fmt in FORMATS.items():
        for mode in ("observed", "reference"):
            if mode in fmt.feature_modes:
                assert SelectionSettings(trace=name, feature_mode=mode).feature_mode == mode
            else:
                with pytest.raises(SettingError, match=f"feature_mode.*{name}"):
                    SelectionSettings(trace=name, feature_mode=mode)
    # the reference construction exists only in the Google feature SQL
    assert "${feature_mode}" in (SQL_DIR / "checkpoint_features.sql").read_text()
    assert "${feature_mode}" not in (SQL_DIR / "checkpoint_features__alibaba.sql").read_text()


def test_the_staging_views_read_every_field_of_the_raw_files():
    # the typed reads (RAW_COLUMNS) against the generator's layouts, which the parser tests check
    # against the real rows quoted in docs/TRACES.md
    for table in ("job_events", "task_events", "task_usage", "machine_events"):
        assert len(RAW_COLUMNS[f"stg_{table}"]) == len(GOOGLE_SCHEMA[table]), table
    assert tuple(RAW_COLUMNS["stg_batch_instance"]) == ALIBABA_BATCH_INSTANCE_COLUMNS
    for fmt in FORMATS.values():
        assert fmt.staging_sql == "" or fmt.staging_sql in RAW_COLUMNS, fmt.name


def test_every_format_has_its_sql_and_locations():
    for name, fmt in FORMATS.items():
        if fmt.read_in_place:   # an operator's own logs: no fetcher, no public location, no paper's grid
            assert not fmt.default_url and fmt.paper_protocol_not_applicable, name
            assert fmt.sql_variant and (SQL_DIR / f"checkpoint_features__{fmt.sql_variant}.sql").exists(), name
            continue
        assert (fmt.layout, fmt.embedded) in FETCHERS, name
        if fmt.sql_variant:
            assert list(SQL_DIR.glob(f"*__{fmt.sql_variant}.sql")), name
        if fmt.staging_sql:
            assert (SQL_DIR / f"{fmt.staging_sql}.sql").exists()
        if fmt.default_url:
            assert default_trace_url(name) == fmt.default_url
        else:
            assert fmt.embedded
            with pytest.raises(ValueError):
                default_trace_url(name)
    assert PAPER_TRACE == {"google_2011": "google", "alibaba_2018": "alibaba", "alibaba_2017": "alibaba"}
    with pytest.raises(ValueError, match="NURD_TRACE"):
        trace_format("google")
