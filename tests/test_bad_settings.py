"""A bad NURD_* value is one line: the variable, the value, what is allowed and the closest allowed
value, before any work; from the settings model, and from the commands as a user types them
(``dagster asset materialize``, ``dg launch``, ``dg check defs``) in real subprocesses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stragglers.settings import Settings, SettingError

REPO = Path(__file__).resolve().parent.parent

#: one of each kind of check: a choice, an integer bound, a float bound, the NURD_TRACE_PARTS list grammar,
#: a number that does not parse; (variable, value, what is allowed, the suggestion or None)
KINDS = [
    ("NURD_PROTOCOL", "operatr", "expected one of 'ours', 'authors', 'operator'", "did you mean 'operator'?"),
    ("NURD_FEATURE_SET", "event", "expected one of 'auto', 'usage', 'events', 'all'", "did you mean 'events'?"),
    ("NURD_HOUND_MIN_TASKS", "3", "expected an integer >= 5", "did you mean 5?"),
    ("NURD_SYNTHETIC_JOBS", "2.0", "expected an integer", "did you mean 10?"),
    ("NURD_COST_LAMBDA", "-0.5", "expected a number in [0, 1000000.0]", "did you mean 0?"),
    ("NURD_TRACE_PARTS", "event", "expected 'all', 'events' or a positive integer", "did you mean 'events'?"),
    ("NURD_TRACE_PARTS", "0", "expected 'all', 'events' or a positive integer", "did you mean '1'?"),
    ("NURD_TRACE_PARTS", "task_events=5-2", "expected 'all', 'events' or a positive integer", None),
    ("NURD_COST_LAMBDA", "cheap", "expected a number", None),
]


@pytest.mark.parametrize("var, value, allowed, suggestion", KINDS)
def test_a_bad_value_is_one_line_with_the_closest_allowed_value(var, value, allowed, suggestion):
    with pytest.raises(SettingError) as e:
        Settings.from_env({var: value})
    line = str(e.value)
    assert "\n" not in line
    assert line.startswith(f"setting {var}=") and value in line
    assert allowed in line
    if suggestion:
        assert suggestion in line
    else:
        assert "did you mean" not in line


def _typed(command: str, env_extra: dict, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NURD_", "DAGSTER_", "VIRTUAL_ENV"))}
    env |= {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", "NURD_AUTOMATION": "off",
            "DAGSTER_HOME": str(cwd / "home"), "NURD_DATA_DIR": str(cwd / "data")} | env_extra
    (cwd / "home").mkdir(exist_ok=True)   # the project's instance settings, as in dagster_home/
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", cwd / "home" / "dagster.yaml")
    return subprocess.run(["bash", "-c", f"source scripts/env.sh && {command}"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("command", ["dagster asset materialize --select nurd_eval",
                                     "dg launch --assets nurd_eval", "dg check defs"])
def test_a_typo_stops_each_command_with_one_line(command, tmp_path):
    r = _typed(command, {"NURD_PROTOCOL": "operatr"}, tmp_path)
    lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    assert r.returncode != 0
    assert len(lines) <= 3, "\n".join(lines[:20])
    assert any(line.startswith("error: setting NURD_PROTOCOL='operatr' is invalid") and
               "did you mean 'operator'?" in line for line in lines), lines
    assert not (tmp_path / "data").exists()   # before any work: no data directory, no warehouse


def test_a_bound_and_a_list_stop_the_cli_with_one_line(tmp_path):
    for var, value, suggestion in (("NURD_HOUND_MIN_TASKS", "3", "did you mean 5?"),
                                   ("NURD_TRACE_PARTS", "event", "did you mean 'events'?")):
        r = _typed("dagster asset materialize --select nurd_eval", {var: value}, tmp_path)
        lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
        assert r.returncode != 0 and len(lines) == 1 and var in lines[0] and suggestion in lines[0], lines
