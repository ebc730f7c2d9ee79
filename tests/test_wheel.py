"""The project as an installed distribution, not a checkout: the wheel carries every module and every
SQL file under two non-generic import names (``nurd_pipeline``, ``stragglers``), and, installed into a
fresh virtual environment outside the checkout, materializes the chain up to ``nurd_eval`` from
another directory (``dagster asset materialize -m nurd_pipeline``)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parent.parent
#: checkout folder -> its name once installed (pyproject.toml [tool.setuptools] package-dir)
INSTALLED_AS = {"pipeline": "nurd_pipeline", "assets": "nurd_pipeline/assets", "stragglers": "stragglers",
                "sql": "stragglers/sql"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(REPO), "-w", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (built,) = out.glob("nurd_pipeline-*.whl")
    return built


def test_the_wheel_holds_every_module_and_sql_file_under_two_names(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"nurd_pipeline", "stragglers"}    # nothing generic (assets, pipeline, sql) at the top
    expected = {f"{INSTALLED_AS[folder]}/{p.relative_to(REPO / folder).as_posix()}"
                for folder in INSTALLED_AS for p in (REPO / folder).rglob("*")
                if p.suffix in (".py", ".sql") and "__pycache__" not in p.parts}
    assert len([n for n in expected if n.endswith(".sql")]) > 30
    assert sorted(expected - names) == []


def test_the_dagster_glue_imports_itself_relatively():
    """Installed, ``assets`` is ``nurd_pipeline.assets``: an absolute ``assets.x`` or ``pipeline.x``
    import inside them would load a second copy in a checkout and fail in the wheel."""
    bad = []
    for folder in ("assets", "pipeline"):
        for path in (REPO / folder).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else [])
                bad += [f"{path.relative_to(REPO)}:{node.lineno} imports {n}" for n in names
                        if n.split(".")[0] in ("assets", "pipeline")]
    assert bad == []


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> Path:
    """A new virtual environment outside the checkout with the wheel installed. Its dependencies are
    the project's own environment's (one .pth line; its editable-install hook is not run from there),
    so the test stays fast and sees only the wheel's copy of the project."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                        "--force-reinstall", str(wheel)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return venv


def _env_outside(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NURD_", "DAGSTER_", "PYTHONPATH", "VIRTUAL_ENV"))}
    return env | {"DAGSTER_HOME": str(home), "NURD_SYNTHETIC_JOBS": "12", "NURD_WORKERS": "1",
                  "NURD_AUTOMATION": "off", "GX_ANALYTICS_ENABLED": "false", "DAGSTER_DISABLE_TELEMETRY": "1"}


def test_the_installed_wheel_runs_the_chain_from_another_directory(fresh_venv, tmp_path):
    python = fresh_venv / "bin" / "python"
    elsewhere = tmp_path / "elsewhere"
    home = tmp_path / "dagster_home"
    elsewhere.mkdir()
    home.mkdir()
    env = _env_outside(home)
    where = subprocess.run([str(python), "-c", "import stragglers, nurd_pipeline; "
                            "print(stragglers.SQL_DIR); print(nurd_pipeline.__file__)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert where.returncode == 0, where.stderr[-3000:]
    sql_dir, module = where.stdout.split()[-2:]
    for installed in (sql_dir, module):   # the wheel's copy, not the checkout's
        assert Path(installed).is_relative_to(fresh_venv) and not Path(installed).is_relative_to(REPO)
    assert (Path(sql_dir) / "jobs.sql").is_file()
    r = subprocess.run([str(python), "-m", "dagster", "asset", "materialize", "-m", "nurd_pipeline",
                        "--select", "*nurd_eval"], cwd=elsewhere, env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0 and "RUN_SUCCESS" in r.stdout + r.stderr, (r.stdout + r.stderr)[-4000:]
    with duckdb.connect(str(elsewhere / "data" / "warehouse.duckdb"), read_only=True) as db:
        assert db.execute("select count(*) from job_metrics where method = 'nurd'").fetchone()[0] > 0
