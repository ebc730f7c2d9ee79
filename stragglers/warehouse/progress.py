"""How far a long warehouse step is: per slice, or per statement from DuckDB's own progress
counter, to the run's log (``progress_to``) or this module's logger."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar

import duckdb

_LOG = logging.getLogger(__name__)
#: Where a long step says how far it is (assets point it at the run's log: ``progress_to``).
progress_log: ContextVar[Callable[[str], None] | None] = ContextVar("progress_log", default=None)


@contextmanager
def progress_to(log: Callable[[str], None]):
    """Send the progress of the steps run inside the block to ``log`` (a Dagster run's log)."""
    token = progress_log.set(log)
    try:
        yield
    finally:
        progress_log.reset(token)


class SliceProgress:
    """``table: slice i/n done in s; about s left``, after each slice once the step has run
    ``every_s`` (short steps stay quiet), to the run's log or this module's logger."""

    def __init__(self, table: str, total: int, every_s: float = 10.0, unit: str = "job ids") -> None:
        self.table, self.total, self.every_s, self.unit = table, total, every_s, unit
        self.started = self.last = time.perf_counter()

    def __call__(self, done: int) -> None:
        now = time.perf_counter()
        if self.total <= 1 or now - self.last < self.every_s and done < self.total:
            return
        if now - self.started < self.every_s:
            return
        self.last = now
        elapsed = now - self.started
        left = f"about {elapsed / done * (self.total - done):.0f} s left" if done < self.total else "done"
        (progress_log.get() or _LOG.info)(
            f"{self.table}: slice {done}/{self.total} of {self.unit} ({100 * done / self.total:.0f}%) "
            f"in {elapsed:.0f} s; {left}")


@contextmanager
def statement_progress(con: duckdb.DuckDBPyConnection, what: str, every_s: float = 10.0):
    """While the block runs one long statement on ``con`` (a step of one query: an unsliced table,
    a scan of every part), say every ``every_s`` how far DuckDB's own progress counter is and
    about how long is left at that pace, to the run's log or this module's logger. A thread reads
    ``query_progress()`` (made to be read beside a running query); the bar itself is not printed."""
    import threading

    log = progress_log.get() or _LOG.info
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    stop = threading.Event()
    started = time.perf_counter()

    def watch() -> None:
        while not stop.wait(every_s):
            try:
                done = con.query_progress()
            except duckdb.Error:
                return
            elapsed = time.perf_counter() - started
            if done and 0 < done < 100:
                log(f"{what}: {done:.0f}% of the query in {elapsed:.0f} s; about "
                    f"{elapsed * (100 - done) / done:.0f} s left at this pace")

    watcher = threading.Thread(target=watch, name=f"progress:{what}", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
