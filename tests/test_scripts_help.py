"""Every script a user may run answers --help with its usage and does nothing else: no file written,
no process left running, the project's files untouched. scripts/ are run by path (as the shell
scripts run them); benchmarks/ and studies/ as modules from the project root (``python -m
benchmarks.<name>``, ``python -m studies.<topic>.<name>``), as their docs say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# imported by the modules beside them, never run
LIBRARIES = {"benchmarks/results.py", "benchmarks/authors_loop.py", "benchmarks/ingest_parts.py",
             "benchmarks/ingest_row_loop.py", "studies/spark/experiment_workload.py",
             "studies/spark/experiment_prediction.py", "studies/spark/experiment_measurement.py",
             "studies/spark/experiment_page.py"}
# one side of benchmarks/engine.py, run by path so that the checkout it measures comes first on its path
BY_PATH = {"benchmarks/engine_side.py"}
SCRIPTS = sorted(str(p.relative_to(ROOT)) for pattern in ("scripts/*.sh", "scripts/*.py", "benchmarks/*.py",
                                                          "studies/**/*.py")
                 for p in ROOT.glob(pattern) if str(p.relative_to(ROOT)) not in LIBRARIES and p.name != "__init__.py")


def command(script: str) -> tuple[list[str], str]:
    """How a user runs ``script`` (the command, without --help) and what its usage line names."""
    if script.endswith(".sh"):
        return ["bash", str(ROOT / script)], Path(script).name
    if script.startswith("scripts/") or script in BY_PATH:
        return [sys.executable, str(ROOT / script)], Path(script).name
    module = script.removesuffix(".py").replace("/", ".")
    return [sys.executable, "-m", module], f"python -m {module}"


def _project_state() -> dict[str, float]:
    """What a script's side effect on the project would change: the top level's entries, and the
    README's and the docs' modification times."""
    state = {p.name: 0.0 for p in ROOT.iterdir()}
    for p in (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*"))):
        state[str(p.relative_to(ROOT))] = p.stat().st_mtime
    return state


def _processes_marked(marker: str) -> list[str]:
    """Processes whose environment holds ``HELP_PROBE=marker`` (one a script would have left running:
    a child inherits its parent's environment, wherever it runs)."""
    found, wanted = [], f"HELP_PROBE={marker}".encode()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and wanted in (proc / "environ").read_bytes().split(b"\0"):
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found


def test_the_libraries_are_not_scripts():
    for lib in LIBRARIES:
        assert "__main__" not in (ROOT / lib).read_text(), f"{lib} runs as a script: test its --help"
    assert len(SCRIPTS) >= 30 and "scripts/cluster_check.sh" in SCRIPTS


def test_no_script_benchmark_or_study_patches_the_import_path():
    """benchmarks/ and studies/ import each other as packages (``from benchmarks.results import
    publish``), run as modules from the project root, and scripts/ import the installed project:
    none puts a folder on ``sys.path``."""
    modules = [s for s in [*SCRIPTS, *sorted(LIBRARIES)] if s.startswith(("benchmarks/", "studies/", "scripts/"))]
    assert len(modules) >= 50
    assert [s for s in modules if "sys.path" in (ROOT / s).read_text()] == []


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_answers_help_and_does_nothing_else(script, tmp_path):
    work = tmp_path / "cwd"
    work.mkdir()
    # where a script would write or start something, were it to run: all inside tmp_path
    env = {**os.environ, "NURD_DATA_DIR": str(tmp_path / "data"), "DAGSTER_HOME": str(tmp_path / "home"),
           "CHECK_DIR": str(tmp_path / "check"), "TMPDIR": str(tmp_path / "tmp"), "HELP_PROBE": str(tmp_path)}
    (tmp_path / "tmp").mkdir()
    before = _project_state()
    cmd, names = command(script)
    # a module runs from the project root, as its docs say; a script by path from anywhere
    r = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=120,
                       cwd=ROOT if "-m" in cmd else work, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    first = r.stdout.lstrip().splitlines()[0] if r.stdout.strip() else ""
    assert first.lower().startswith("usage:") and names in first, r.stdout[:500]
    assert len(r.stdout.splitlines()) >= 3, r.stdout          # more than a bare synopsis
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "tmp"], list(tmp_path.iterdir())
    assert not any(work.iterdir()) and not any((tmp_path / "tmp").iterdir())
    assert _processes_marked(str(tmp_path)) == []
    assert _project_state() == before
    assert "installing" not in r.stdout and "creating .venv" not in r.stdout


def test_cluster_check_refuses_an_option_as_its_port(tmp_path):
    r = subprocess.run(["bash", str(ROOT / "scripts" / "cluster_check.sh"), "--frobnicate"], capture_output=True,
                       text=True, timeout=30, env={**os.environ, "CHECK_DIR": str(tmp_path / "check")})
    assert r.returncode == 2 and "unknown option '--frobnicate'" in r.stderr
    assert not (tmp_path / "check").exists()
