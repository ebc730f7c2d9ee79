"""One writer at a time on the warehouse, and a clear message when it is busy.

DuckDB lets one process open the file for writing; a second one gets
``Could not set lock on file`` (after Dagster's retries, ~100 s later). Under
``dagster dev`` the run queue (``dagster_home/dagster.yaml``: one run at a time)
keeps UI and automation runs from colliding; a CLI run does not pass through that
queue, so every run that writes the warehouse also takes this lock for its whole
duration: ``<data_dir>/warehouse.duckdb.writer``, an ``flock`` (released by the
kernel when the process dies, even by ``kill -9``) whose file says who holds it.
A second run fails at once, before any work, naming the run that holds it.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from contextlib import contextmanager
from pathlib import Path


class WarehouseBusyError(RuntimeError):
    """Another run is writing the warehouse."""


def lock_path(database: Path) -> Path:
    return Path(str(database) + ".writer")


def holder(database: Path) -> dict | None:
    """Who holds the writer lock, as it wrote itself down (None if nobody wrote)."""
    try:
        return json.loads(lock_path(database).read_text() or "null")
    except (OSError, ValueError):
        return None


@contextmanager
def writer_lock(database: Path, run_id: str, what: str = ""):
    """Hold the warehouse's writer lock, or raise WarehouseBusyError naming its holder at once."""
    path = lock_path(database)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            h = holder(database) or {}
            since = time.strftime("%H:%M:%S UTC", time.gmtime(h["since"])) if "since" in h else "?"
            raise WarehouseBusyError(
                f"the warehouse {database} is being written by run {h.get('run_id', '?')} "
                f"(pid {h.get('pid', '?')} on {h.get('host', '?')}, since {since}"
                + (f", {h['what']}" if h.get("what") else "") + "). This run stops before doing any work. "
                "Wait for that run to finish (or terminate it in the UI), then run again; runs launched from "
                "the UI or by automation queue behind each other by themselves.") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"run_id": run_id, "pid": os.getpid(), "host": socket.gethostname(),
                                 "since": time.time(), "what": what}).encode())
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
