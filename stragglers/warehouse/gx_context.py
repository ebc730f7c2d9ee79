"""Great Expectations' setup (GX Core 1.x): GX imported with its analytics off, a fresh
ephemeral context per validation, and the locks that serialise validations.

Plain Python, no Dagster.  Data Docs: with ``docs_dir`` the GX expectation and
validation-result stores are file-backed under ``docs_dir/_gx`` and a local site
writes HTML to ``docs_dir`` (``docs_dir/index.html``), so results of several
suites / processes accumulate in one index.  Without ``docs_dir`` everything
stays in memory.  A fresh ephemeral context is created per call (a few ms);
calls are serialised by a process lock and, for the docs build, a file lock on
``docs_dir``.
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

# GX must never phone home.  Set before great_expectations is imported.
os.environ["GX_ANALYTICS_ENABLED"] = "false"

try:  # POSIX file lock for the shared docs_dir (several Dagster processes).
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]


# GX's expectation classes, for the suites (imported after the switch above)
def _gxe():
    import great_expectations as gx

    return gx.expectations


_LOCK = threading.RLock()


@contextmanager
def _dir_lock(docs_dir: Path | None) -> Iterator[None]:
    if docs_dir is None or fcntl is None:
        yield
        return
    docs_dir.mkdir(parents=True, exist_ok=True)
    with open(docs_dir / ".gx_lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _make_context(docs_dir: Path | None):
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    defaults = InMemoryStoreBackendDefaults(init_temp_docs_sites=False)
    stores = dict(defaults.stores)
    sites: dict = {}
    if docs_dir is not None:
        base = Path(docs_dir).resolve()
        for store_name, cls, sub in (
            (defaults.expectations_store_name, "ExpectationsStore", "expectations"),
            (defaults.validation_results_store_name, "ValidationResultsStore", "validations"),
        ):
            stores[store_name] = {
                "class_name": cls,
                "store_backend": {
                    "class_name": "TupleFilesystemStoreBackend",
                    "base_directory": str(base / "_gx" / sub),
                },
            }
        sites = {
            "local_site": {
                "class_name": "SiteBuilder",
                "show_how_to_buttons": False,
                "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(base)},
                "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            }
        }
    config = DataContextConfig(
        store_backend_defaults=defaults,
        stores=stores,
        data_docs_sites=sites,
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False),
    )
    return gx.get_context(mode="ephemeral", project_config=config)


def _gx_name(*parts: str | None) -> str:
    # no dots: GX's filesystem stores turn dots in suite names into sub-folders
    return "__".join(re.sub(r"[^A-Za-z0-9_-]+", "_", p) for p in parts if p)

