"""One test per malformed-input class: the error names the file and the line in it (or the job
and task), what was expected and what to do; on_bad_rows=quarantine sets the rows aside, counted."""

from __future__ import annotations

import gzip
import json
import re

import duckdb
import pytest

from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_selection
from stragglers.warehouse.staging import stage_alibaba, stage_google
from stragglers.warehouse.locate import TraceFormatError, check_gzip
from tests.minitrace import FINISH, S, SCHEDULE, SUBMIT, T0, MiniTrace

WHAT_TO_DO = "What to do: "


def _trace(root, n_parts=2):
    m = MiniTrace()
    m.job(1, 1)
    for i in range(4):
        m.run(1, i, T0, T0 + 900 * S)
    m.write(root, n_parts=n_parts)
    return root


def _edit(part, edit):
    """Rewrite a gzip part's lines with ``edit(lines) -> lines``."""
    lines = gzip.decompress(part.read_bytes()).decode().splitlines()
    part.write_bytes(gzip.compress(("\n".join(edit(lines)) + "\n").encode()))


def _part(root, table, i=0):
    return sorted((root / table).glob("*.gz"))[i]


def _fail(root, settings=None):
    s = settings or SelectionSettings(min_tasks=2)
    con = duckdb.connect()
    stage_google(con, root, s)
    with pytest.raises(TraceFormatError) as e:
        build_selection(con, s)
    return str(e.value)


def _replace_field(line, i, value):
    f = line.split(",")
    f[i] = value
    return ",".join(f)


def test_wrong_field_count(tmp_path):
    root = _trace(tmp_path)
    part = _part(root, "task_usage")
    _edit(part, lambda ls: ls[:2] + [ls[2].rsplit(",", 1)[0]] + ls[3:])   # line 3 loses its last field
    msg = _fail(root)
    assert f"{part}, line 3: wrong field count: expected 20 fields" in msg
    assert WHAT_TO_DO in msg and "NURD_ON_BAD_ROWS=quarantine" in msg


def test_non_numeric_value(tmp_path):
    root = _trace(tmp_path)
    part = _part(root, "task_events")
    _edit(part, lambda ls: [ls[0], _replace_field(ls[1], 2, "job7")] + ls[2:])
    msg = _fail(root)
    assert f"{part}, line 2: non-numeric value 'job7' in column job_id: expected BIGINT" in msg
    assert WHAT_TO_DO in msg


def test_event_type_out_of_range(tmp_path):
    root = _trace(tmp_path)
    part = _part(root, "task_events")
    _edit(part, lambda ls: ls[:3] + [_replace_field(ls[3], 5, "12")] + ls[4:])
    msg = _fail(root)
    assert re.search(rf"{re.escape(str(part))}, line 4: event type outside 0..8 in task_events \(job 1, task \d\): "
                     r"expected an event type in 0..8", msg), msg
    assert WHAT_TO_DO in msg


def test_finish_before_schedule_names_job_and_task(tmp_path):
    m = MiniTrace()
    m.job(1, 1)
    for i in range(3):
        m.run(1, i, T0, T0 + 900 * S)
    m.event(1, 3, T0, SUBMIT)
    m.event(1, 3, T0 + 500 * S, SCHEDULE)
    m.event(1, 3, T0 + 100 * S, FINISH)      # FINISH 400 s before its SCHEDULE
    m.write(tmp_path, n_parts=1)
    s = SelectionSettings(min_tasks=2)
    con = duckdb.connect()
    stage_google(con, tmp_path, s)
    with pytest.raises(TraceFormatError) as e:
        build_selection(con, s)
    msg = str(e.value)
    assert "FINISH before SCHEDULE (time going backwards within the task) (job 1, task 3): expected the final " \
           "FINISH after the first SCHEDULE" in msg
    # nothing built from the bad input stays behind
    assert con.execute("SELECT count(*) FROM task_lifecycle").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM table_settings WHERE table_name = 'task_lifecycle'").fetchone()[0] == 0
    assert WHAT_TO_DO in msg


def test_duplicate_row(tmp_path):
    root = _trace(tmp_path)
    part = _part(root, "task_events")
    _edit(part, lambda ls: ls[:3] + [ls[1]] + ls[3:])   # line 2 again as line 4
    msg = _fail(root)
    assert f"{part}, line 4: duplicate row (the same task event twice)" in msg


@pytest.mark.parametrize("damage, expected", [
    (lambda b: b[: len(b) // 2], "truncated gzip"),
    (lambda b: b[:10] + bytes(x ^ 0xFF for x in b[10:40]) + b[40:], "corrupt gzip"),
    (lambda b: b"", "empty file (0 bytes)"),
])
def test_truncated_corrupt_or_empty_part(tmp_path, damage, expected):
    m = MiniTrace()
    m.job(1, 1)
    for i in range(60):      # enough rows that half the bytes cut a row
        m.run(1, i, T0, T0 + 900 * S)
    m.write(tmp_path, n_parts=1)
    part = _part(tmp_path, "task_events")
    part.write_bytes(damage(part.read_bytes()))
    with pytest.raises(TraceFormatError, match=re.escape(f"{part}: {expected}")) as e:
        check_gzip(part)
    assert "materialize raw_trace again" in str(e.value)
    msg = _fail(tmp_path)
    assert f"{part}: {expected}" in msg and "materialize raw_trace again" in msg


def test_part_listed_but_absent(tmp_path):
    root = _trace(tmp_path)
    part = _part(root, "task_usage", 1)
    rel = part.relative_to(root).as_posix()
    (root / ".verified.json").write_text(json.dumps({"version": 1, "files": {rel: {"size": 1}}}))
    part.unlink()
    with pytest.raises(TraceFormatError, match=re.escape(f"{part}: listed in SHA256SUM and fetched earlier, "
                                                         "but absent now")):
        stage_google(duckdb.connect(), root, SelectionSettings(min_tasks=2))


def test_quarantine_sets_bad_rows_aside_and_counts_them(tmp_path):
    root = _trace(tmp_path)
    usage = _part(root, "task_usage")
    events = _part(root, "task_events")
    _edit(usage, lambda ls: ls[:2] + [ls[2].rsplit(",", 1)[0]] + ls[3:])
    _edit(events, lambda ls: ls[:3] + [_replace_field(ls[3], 5, "12")] + ls[4:])
    s = SelectionSettings(min_tasks=2, on_bad_rows="quarantine")
    con = duckdb.connect()
    stage_google(con, root, s)
    build_selection(con, s)
    q = con.execute("SELECT stage, file, line, reason FROM quarantine ORDER BY stage").fetchall()
    assert q[0][0] == "jobs" and q[0][1:3] == (str(events), 4) and q[0][3].startswith("event type outside 0..8")
    assert q[1] == ("staged_trace", str(usage), 3, "wrong field count: expected 20 fields, found 19")
    funnel = con.execute("SELECT tasks FROM selection_funnel WHERE reason = 'quarantined'").fetchone()
    assert funnel == (2,)
    assert con.execute("SELECT count(*) FROM tasks").fetchone()[0] > 0


ALIBABA_ROW = "inst_{i},task_1,j_1,1,Terminated,{start},{end},m_1,1,1,50,60,0.5,0.6"


def _alibaba(tmp_path, rows):
    p = tmp_path / "batch_instance.csv"
    p.write_text("\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("bad, expected", [
    ("inst_x,task_1,j_1,1,Terminated,100,200,m_1,1,1,50,60,0.5", "wrong field count: expected 14 fields, found 13"),
    ("inst_x,task_1,j_1,1,Terminated,1OO,200,m_1,1,1,50,60,0.5,0.6",
     "non-numeric value '1OO' in column start_time: expected BIGINT"),
])
def test_alibaba_rows_located(tmp_path, bad, expected):
    rows = [ALIBABA_ROW.format(i=i, start=100, end=200 + i) for i in range(5)]
    path = _alibaba(tmp_path, rows[:2] + [bad] + rows[2:])
    s = SelectionSettings(trace="alibaba_2018", min_tasks=2)
    con = duckdb.connect()
    stage_alibaba(con, path, s)
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}, line 3: {expected}")):
        build_selection(con, s)
    q = SelectionSettings(trace="alibaba_2018", min_tasks=2, on_bad_rows="quarantine")
    con = duckdb.connect()
    stage_alibaba(con, path, q)
    build_selection(con, q)
    assert con.execute("SELECT file, line, reason FROM quarantine").fetchall() == [(str(path), 3, expected)]


def test_the_run_a_user_starts_names_file_and_line(tmp_path):
    """Through Dagster: the first read of the staged views (a blocking raw check) fails located."""
    import dagster as dg

    from assets import warehouse
    from assets.resources import PipelineSettings, WarehouseResource

    data = tmp_path / "data"
    raw = _trace(data / "raw" / "google_2011")
    part = _part(raw, "task_usage")
    _edit(part, lambda ls: ls[:2] + [ls[2].rsplit(",", 1)[0]] + ls[3:])
    nurd = PipelineSettings(data_dir=str(data), trace="google_2011", min_tasks=2)
    result = dg.materialize([warehouse.staged_trace, *warehouse.checks[:3]],
                            resources={"nurd": nurd, "duckdb": WarehouseResource(nurd=nurd)},
                            raise_on_error=False, instance=dg.DagsterInstance.ephemeral())
    assert not result.success
    errors = "\n".join(str(e.event_specific_data.error) for e in result.all_events if e.is_step_failure)
    assert f"{part}, line 3: wrong field count: expected 20 fields, found 19" in errors, errors[-2000:]


def _two_part_mirror(root):
    """A mirror (no generator's note) whose every table has two parts with rows: job 1, then job 2."""
    from stragglers.traces.synth.formats import EMPTY_PARTS_MARKER

    _trace(root, n_parts=1)
    m = MiniTrace()
    m.job(2, 1)
    for i in range(4):
        m.run(2, i, T0, T0 + 900 * S)
    second = m.write(root.parent / (root.name + "-second"), n_parts=1)
    for table in ("job_events", "task_events", "task_usage"):
        (second / table / "part-00000-of-00001.csv.gz").rename(root / table / "part-00001-of-00001.csv.gz")
    (root / EMPTY_PARTS_MARKER).unlink()
    return root


def test_a_part_with_no_rows_in_a_mirror_stops_naming_it_unless_accepted(tmp_path):
    """A valid gzip with no rows among parts with rows (a third of the trace silently gone, before):
    the run stops naming the part, unless NURD_EMPTY_PARTS=accept, which counts it."""
    from stragglers.traces.synth.formats import EMPTY_PARTS_MARKER
    from stragglers.warehouse.staged_parts import parts_note

    root = _two_part_mirror(tmp_path / "mirror")
    emptied = root / "task_events" / "part-00001-of-00001.csv.gz"
    emptied.write_bytes(gzip.compress(b"", mtime=0))
    con = duckdb.connect()
    with pytest.raises(TraceFormatError) as e:
        stage_google(con, root, SelectionSettings(trace="google_2011", min_tasks=2))
    msg = str(e.value)
    assert f"{emptied}: a part with no rows while 1 other task_events parts have rows" in msg, msg
    assert "What to do: " in msg and "NURD_EMPTY_PARTS=accept" in msg
    # accepted: staged, counted, and said
    s = SelectionSettings(trace="google_2011", min_tasks=2, empty_parts="accept")
    stage_google(con, root, s)
    build_selection(con, s)
    assert con.execute("SELECT empty_parts FROM staged_tables WHERE table_name = 'task_events'").fetchone() == (1,)
    assert "task_events: 2 parts, 1 parts with no rows (accepted)" in parts_note(con, s.trace)
    assert con.execute("SELECT count(*) FROM jobs").fetchone()[0] == 1     # job 2's events are gone with the part


def test_a_gap_in_part_numbers_is_counted_and_said(tmp_path):
    from stragglers.warehouse.staged_parts import parts_note
    from stragglers.warehouse.locate import part_gaps

    root = _trace(tmp_path, n_parts=4)
    assert part_gaps(sorted((root / "task_events").glob("*.gz"))) == []
    (root / "task_events" / "part-00001-of-00004.csv.gz").unlink()
    (root / "task_events" / "part-00000-of-00004.csv.gz").unlink()
    assert part_gaps(sorted((root / "task_events").glob("*.gz"))) == [0, 1]
    con = duckdb.connect()
    s = SelectionSettings(min_tasks=2)
    stage_google(con, root, s)
    assert con.execute("SELECT missing_parts FROM staged_tables WHERE table_name = 'task_events'").fetchone() == (2,)
    assert "task_events: 2 parts, 2 part numbers missing below the highest present" in parts_note(con, s.trace)


def _usage_table(root, settings) -> list:
    con = duckdb.connect()
    stage_google(con, root, settings)
    build_selection(con, settings)
    return con, con.execute("SELECT * EXCLUDE (trace) FROM usage_windows ORDER BY ALL").fetchall()


@pytest.mark.parametrize("value", ["NaN", "inf", "-Infinity"])
def test_a_non_finite_usage_value_is_located_or_quarantined(tmp_path, value):
    clean = _usage_table(_trace(tmp_path / "clean"), SelectionSettings(min_tasks=2))[1]
    root = _trace(tmp_path / "bad")
    part = _part(root, "task_usage")
    _edit(part, lambda ls: ls[:1] + [_replace_field(ls[1], 5, value)] + ls[2:])   # cpu_rate of line 2
    msg = _fail(root)
    assert re.search(rf"{re.escape(str(part))}, line 2: non-finite value \(NaN or infinity\) in column cpu_rate "
                     r"of task_usage \(job 1, task \d\): expected a finite number", msg), msg
    assert WHAT_TO_DO in msg and "NURD_ON_BAD_ROWS=quarantine" in msg
    con, got = _usage_table(root, SelectionSettings(min_tasks=2, on_bad_rows="quarantine"))
    assert con.execute("SELECT stage, file, line FROM quarantine").fetchall() == [("tasks", str(part), 2)]
    assert len(got) == len(clean) - 1                  # the quarantined row's window is left out
    assert set(got) < set(clean)
    assert all(all(v is None or v == v for v in row) for row in got)   # no NaN reached usage_windows


def test_a_usage_window_twice_is_located_or_counted_once(tmp_path):
    clean = _usage_table(_trace(tmp_path / "clean"), SelectionSettings(min_tasks=2))[1]
    root = _trace(tmp_path / "bad")
    part = _part(root, "task_usage")
    _edit(part, lambda ls: ls + ls)            # the part's rows twice
    msg = _fail(root)
    m = re.search(rf"{re.escape(str(part))}, line (\d+): duplicate row \(the same task usage window twice\)", msg)
    assert m and int(m.group(1)) > 1, msg
    con, got = _usage_table(root, SelectionSettings(min_tasks=2, on_bad_rows="quarantine"))
    assert got == clean                        # each window once: sums and durations as in the clean trace
    assert con.execute("SELECT count(*) FROM quarantine WHERE stage = 'tasks'").fetchone()[0] > 0


def test_a_job_event_twice_is_located(tmp_path):
    root = _trace(tmp_path)
    part = _part(root, "job_events")
    _edit(part, lambda ls: ls + ls[:1])
    msg = _fail(root)
    assert re.search(rf"{re.escape(str(part))}, line \d+: duplicate row \(the same job event twice\) \(job 1\)",
                     msg), msg


def test_a_row_error_names_the_source_and_the_local_copy(tmp_path):
    from stragglers.traces.download import download_google

    mirror = _trace(tmp_path / "mirror")
    bad = _part(mirror, "task_events")
    _edit(bad, lambda ls: [ls[0], _replace_field(ls[1], 2, "job7")] + ls[2:])
    local = tmp_path / "data" / "raw" / "google_2011"
    download_google(str(mirror), local, parts="all", workers=1, progress=False)
    copy = local / "task_events" / bad.name
    msg = _fail(local)
    assert f"{copy}, line 2 (the local copy of {bad}): non-numeric value 'job7'" in msg, msg


SELECTION_TABLES = ("task_lifecycle", "jobs", "usage_windows", "task_outcomes", "tasks", "selection_funnel")


def _tables(db) -> dict:
    with duckdb.connect(str(db), read_only=True) as con:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in SELECTION_TABLES}


def _build(root, db, settings):
    with duckdb.connect(str(db)) as con:
        stage_google(con, root, settings)
        build_selection(con, settings)


@pytest.mark.parametrize("fault", ["part_without_rows", "nan_usage_value", "usage_rows_twice"])
def test_a_rerun_after_fixing_the_input_equals_a_clean_run(tmp_path, fault):
    """The fault stops the run with a located error; the user fixes the file; the rerun, on the same
    warehouse, gives tables identical to a run that never saw the fault."""
    s = SelectionSettings(trace="google_2011", min_tasks=2)
    clean_db = tmp_path / "clean.duckdb"
    _build(_two_part_mirror(tmp_path / "clean"), clean_db, s)
    root = _two_part_mirror(tmp_path / "mirror")
    part = {"part_without_rows": root / "task_events" / "part-00001-of-00001.csv.gz",
            "nan_usage_value": _part(root, "task_usage"), "usage_rows_twice": _part(root, "task_usage")}[fault]
    good = part.read_bytes()
    if fault == "part_without_rows":
        part.write_bytes(gzip.compress(b"", mtime=0))
    elif fault == "nan_usage_value":
        _edit(part, lambda ls: ls[:1] + [_replace_field(ls[1], 5, "NaN")] + ls[2:])
    else:
        _edit(part, lambda ls: ls + ls)
    db = tmp_path / "w.duckdb"
    with pytest.raises(TraceFormatError, match=re.escape(str(part))):
        _build(root, db, s)
    part.write_bytes(good)                        # the user fixes the input
    _build(root, db, s)
    assert _tables(db) == _tables(clean_db)


@pytest.mark.parametrize("rows, expected", [
    (["0,1,0,p1,0.5,0.25", "0,2,0,p1,NaN,0.25"],
     r"line 2: non-finite value \(NaN or infinity\) in column cpus of machine_events \(machine 2\)"),
    (["0,1,0,p1,0.5,0.25", "5,1,1,,,", "5,1,1,,,"],
     r"line 3: duplicate row \(the same machine event twice\) \(machine 1\): expected each machine event once"),
])
def test_machine_events_values_and_repeats_are_located(tmp_path, rows, expected):
    from stragglers.nodes.build import stage_machine_events

    root = _trace(tmp_path)
    part = root / "machine_events" / "part-00000-of-00001.csv.gz"
    part.parent.mkdir()
    part.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode(), mtime=0))
    con = duckdb.connect()
    with pytest.raises(TraceFormatError, match=re.escape(str(part)) + ", " + expected):
        stage_machine_events(con, root, SelectionSettings(min_tasks=2))
    # quarantined instead: counted, and the capacities never take the bad value
    s = SelectionSettings(min_tasks=2, on_bad_rows="quarantine")
    assert stage_machine_events(con, root, s)
    assert con.execute("SELECT count(*) FROM quarantine WHERE stage = 'machines'").fetchone()[0] == 1


def test_a_header_row_is_named_not_counted(tmp_path):
    import dagster as dg

    from assets import warehouse
    from assets.resources import PipelineSettings, WarehouseResource

    data = tmp_path / "data"
    raw = _trace(data / "raw" / "google_2011")
    part = _part(raw, "task_events")
    _edit(part, lambda ls: ["time,missing_info,job_id,task_index,machine_id,event_type,user,class,priority,"
                            "cpu,mem,disk,different_machine"] + ls)
    nurd = PipelineSettings(data_dir=str(data), trace="google_2011", min_tasks=2)
    result = dg.materialize([warehouse.staged_trace], resources={"nurd": nurd, "duckdb": WarehouseResource(nurd=nurd)},
                            raise_on_error=False, instance=dg.DagsterInstance.ephemeral())
    assert not result.success                     # staged_trace stops there, before counting the header
    errors = "\n".join(str(e.event_specific_data.error) for e in result.all_events if e.is_step_failure)
    assert f"{part}, line 1: non-numeric value 'time' in column time: expected BIGINT" in errors, errors[-2000:]
