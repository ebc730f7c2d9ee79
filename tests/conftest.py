import os
from pathlib import Path

import pytest

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

REPO = Path(__file__).resolve().parent.parent


def _shared_realdata(holds) -> Path | None:
    """The first real-data root for which ``holds(root)``: ``$NURD_REALDATA_DIR``, else
    ``<repo>/../shared/realdata`` (where CI puts it beside the clone); None where neither does
    (a user's clone)."""
    for candidate in (os.environ.get("NURD_REALDATA_DIR"), REPO.parent / "shared" / "realdata"):
        if candidate and holds(Path(candidate)):
            return Path(candidate)
    return None


def realdata_dir() -> Path | None:
    """The real Google 2011 excerpt's root (with its ``google_2011`` folder); None where absent."""
    return _shared_realdata(lambda root: (root / "google_2011").is_dir())


def _found_or_skip(found: Path | None, what: str, where: str) -> Path:
    """``found``, or the test skipped with the reason: ``what`` is not found, and where to put it."""
    if found is None:
        pytest.skip(f"{what} not found: set NURD_REALDATA_DIR or put {where} beside the repository (CI does; a "
                    f"user's clone has none)")
    return found


@pytest.fixture(scope="session")
def realdata() -> Path:
    """Skips the test, with the reason, where the real trace excerpt is absent."""
    return _found_or_skip(realdata_dir(), "real trace excerpt", "shared/realdata")


def spark_realdata_dir() -> Path | None:
    """The real Spark event logs (shared/realdata/spark_eventlogs, with its MANIFEST.tsv), found as
    ``realdata_dir`` finds the Google excerpt; None where absent."""
    root = _shared_realdata(lambda root: (root / "spark_eventlogs" / "MANIFEST.tsv").is_file())
    return None if root is None else root / "spark_eventlogs"


@pytest.fixture(scope="session")
def spark_realdata() -> Path:
    """Skips the test, with the reason, where the real Spark event logs are absent."""
    return _found_or_skip(spark_realdata_dir(), "real Spark event logs", "shared/realdata/spark_eventlogs")


@pytest.fixture(scope="module")
def mini_warehouse(tmp_path_factory):
    """Builds a hand-made trace (tests/minitrace.py) into a warehouse of its own, in the staging order
    (``build_warehouse``): ``mini_warehouse(trace, settings, n_parts=1, until="features")`` -> an open
    connection, closed once the module's tests are done."""
    import duckdb

    from stragglers.warehouse.assemble import build_warehouse

    opened = []

    def build(trace, settings, *, n_parts: int = 1, until: str = "features"):
        root = tmp_path_factory.mktemp("mini_warehouse")
        trace.write(root / "raw", n_parts=n_parts)
        con = duckdb.connect(str(root / "warehouse.duckdb"))
        opened.append(con)
        build_warehouse(con, root / "raw", settings, until=until)
        return con

    yield build
    for con in opened:
        con.close()


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder ``build(folder)`` fills once per test run, shared by every xdist worker: a session
    fixture runs once per worker, so the first worker to ask builds it under the run's common
    temporary root while holding a lock, and the others, waiting on the lock, reuse it. Without
    workers it is an ordinary folder of the session. Only for what the tests read, never change."""
    from filelock import FileLock

    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    common = tmp_path_factory.getbasetemp().parent
    folder, done = common / name, common / f"{name}.built"
    with FileLock(str(common / f"{name}.lock")):
        if not done.exists():
            if folder.exists():   # a build that failed on another worker: this one tries again
                import shutil
                shutil.rmtree(folder)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def spark_eventlogs(tmp_path_factory):
    """Event logs of speculative applications run on a real local Spark standalone cluster
    (tests/spark_cluster.py), written once per test run: a ``Generated`` (``.eventlog_dir``, ``.apps``
    with each one's codec, rolling and Spark's own speculative copies). Skips, saying what to install,
    without Java 17+. ``NURD_SPARK_EVENTLOGS=DIR`` reuses ``python -m tests.spark_cluster --out DIR``."""
    from tests import spark_cluster

    reused = os.environ.get("NURD_SPARK_EVENTLOGS")
    if reused:
        return spark_cluster.Generated.load(Path(reused))
    reason = spark_cluster.java_missing_reason()
    if reason:
        pytest.skip(reason)
    # one cluster run for the run's workers: the test files reading the logs may be on either
    return spark_cluster.Generated.load(built_once(tmp_path_factory, "spark_eventlogs", spark_cluster.generate))


#: the test files that take longest, slowest first (benchmarks/timings.py lists the slowest tests in
#: docs/TIMINGS.md). scripts/test.sh hands whole files to its workers in collection order
#: (--dist loadfile --no-loadscope-reorder): these start first, so that the last files are short ones
#: and the workers end together. Of the files reading the Spark cluster's logs (built once for the run,
#: tests/conftest.py built_once) only one is here: the others come later, when the logs are written,
#: rather than wait on another worker for them.
SLOWEST_FILES = ("test_future_cannot_change_past.py", "test_user_commands.py", "test_scripts_help.py",
                 "test_bounded_memory.py", "test_realdata.py", "test_spark_cluster.py", "test_spark_experiment.py",
                 "test_spark_dagster.py", "test_wheel.py", "test_first_screen.py", "test_methods.py",
                 "test_operator_protocol.py", "test_sweep.py", "test_bad_settings.py", "test_pipeline.py",
                 "test_hound.py", "test_product.py", "test_faults.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(SLOWEST_FILES)}
    # a stable sort: within a file, and among the other files, the collection order stays
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


#: files whose tests build two independent worlds in two module fixtures: under --dist loadfile each half
#: (the tests named or parametrized for the real excerpt, and the others) is a unit of its own, so that the two halves,
#: each minutes long, run on two workers side by side
SPLIT_FILES = {"test_future_cannot_change_past.py": "_real"}


def _scope(nodeid: str) -> str:
    """The unit of work of ``nodeid`` for xdist: its file, or for a SPLIT_FILES file the half its test
    belongs to (its name, parameters aside, ends with the marker, or its first parameter is the marker's
    world: ``test_x_real`` and ``test_x[real-abod]`` are that half)."""
    path, _, test = nodeid.partition("::")
    marker = SPLIT_FILES.get(path.rsplit("/", 1)[-1])
    if marker is None:
        return path
    name, _, params = test.partition("[")
    ours = name.endswith(marker) or params.split("-", 1)[0].rstrip("]") == marker.lstrip("_")
    return f"{path}::{marker if ours else 'others'}"


@pytest.hookimpl(optionalhook=True)   # an xdist hook: unknown, and unused, with -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SplitLoadFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    return SplitLoadFileScheduling(config, log)
