"""Every script a user may run (scripts/, benchmarks/, studies/) answers --help with its usage and
does nothing else: no file written, no process left running, the project's files untouched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# imported by the scripts beside it, never run
LIBRARIES = {"benchmarks/results.py"}
SCRIPTS = sorted(str(p.relative_to(ROOT)) for pattern in ("scripts/*.sh", "scripts/*.py", "benchmarks/*.py",
                                                          "studies/**/*.py")
                 for p in ROOT.glob(pattern) if str(p.relative_to(ROOT)) not in LIBRARIES and p.name != "__init__.py")


def _project_state() -> dict[str, float]:
    """What a script's side effect on the project would change: the top level's entries, and the
    README's and the docs' modification times."""
    state = {p.name: 0.0 for p in ROOT.iterdir()}
    for p in (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*"))):
        state[str(p.relative_to(ROOT))] = p.stat().st_mtime
    return state


def _processes_in(folder: Path) -> list[str]:
    """Processes whose working directory is ``folder`` (one a script would have left running)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and Path(os.readlink(proc / "cwd")) == folder:
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found


def test_the_libraries_are_not_scripts():
    for lib in LIBRARIES:
        assert "__main__" not in (ROOT / lib).read_text(), f"{lib} runs as a script: test its --help"
    assert len(SCRIPTS) >= 30 and "scripts/cluster_check.sh" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_answers_help_and_does_nothing_else(script, tmp_path):
    work = tmp_path / "cwd"
    work.mkdir()
    # where a script would write or start something, were it to run: all inside tmp_path
    env = {**os.environ, "NURD_DATA_DIR": str(tmp_path / "data"), "DAGSTER_HOME": str(tmp_path / "home"),
           "CHECK_DIR": str(tmp_path / "check"), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    before = _project_state()
    cmd = ["bash"] if script.endswith(".sh") else [sys.executable]
    r = subprocess.run([*cmd, str(ROOT / script), "--help"], capture_output=True, text=True, timeout=120,
                       cwd=work, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    first = r.stdout.lstrip().splitlines()[0] if r.stdout.strip() else ""
    assert first.lower().startswith("usage:") and Path(script).name in first, r.stdout[:500]
    assert len(r.stdout.splitlines()) >= 3, r.stdout          # more than a bare synopsis
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "tmp"], list(tmp_path.iterdir())
    assert not any(work.iterdir()) and not any((tmp_path / "tmp").iterdir())
    assert _processes_in(work) == []
    assert _project_state() == before
    assert "installing" not in r.stdout and "creating .venv" not in r.stdout


def test_cluster_check_refuses_an_option_as_its_port(tmp_path):
    r = subprocess.run(["bash", str(ROOT / "scripts" / "cluster_check.sh"), "--frobnicate"], capture_output=True,
                       text=True, timeout=30, env={**os.environ, "CHECK_DIR": str(tmp_path / "check")})
    assert r.returncode == 2 and "unknown option '--frobnicate'" in r.stderr
    assert not (tmp_path / "check").exists()
