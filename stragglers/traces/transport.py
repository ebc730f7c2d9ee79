"""Transport of trace files: http(s), file:// or a plain directory, with resume
(HTTP ``Range``), retries with exponential backoff, sha256 while streaming, and
publish-by-rename (a file only appears under its final name once verified; in
flight it lives at ``<name>.part``). No Dagster; no trace format knowledge.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

_CHUNK = 1 << 20  # 1 MiB
_MAX_BACKOFF_S = 60.0


# --------------------------------------------------------------------------
# Results and errors
# --------------------------------------------------------------------------


class TraceDownloadError(RuntimeError):
    """A trace file could not be fetched or verified. ``path``/``url`` name it."""

    def __init__(self, message: str, *, path: str | None = None, url: str | None = None,
                 transient: bool = False, not_found: bool = False):
        super().__init__(message)
        self.path = path
        self.url = url
        self.not_found = not_found  # the file is not at the source
        # True when a later attempt may succeed (network gave up); False for a
        # corrupt, truncated-at-source or missing file, which retrying cannot fix
        self.transient = transient


@dataclass
class DownloadReport:
    files: list[Path] = field(default_factory=list)  # final paths of every selected file
    bytes_downloaded: int = 0  # bytes transferred in this run (excludes resumed prefixes)
    bytes_total: int = 0  # total size of the selected files on disk
    files_verified: int = 0  # files checksum/size-verified in this run (hashed now)
    files_skipped: int = 0  # files already present and verified: not fetched
    files_unverified: int = 0  # fetched from a local source without SHA256SUM: size-checked only
    seconds: float = 0.0
    tables: dict = field(default_factory=dict)  # Google: table -> parts selected
    tables_missing: dict = field(default_factory=dict)  # Google: table -> why it has no parts


class _Retryable(Exception):
    """Transient failure: retry (with backoff), resuming the .part file."""


class _Cancelled(Exception):
    pass


class _Stats:
    def __init__(self, bar=None):
        self.lock = threading.Lock()
        self.bytes_downloaded = 0
        self.bar = bar

    def add(self, n: int) -> None:
        with self.lock:
            self.bytes_downloaded += n
            if self.bar is not None:
                self.bar.update(n)

    def grow_total(self, n: int) -> None:
        if self.bar is None or n <= 0:
            return
        with self.lock:
            self.bar.total = (self.bar.total or 0) + n
            self.bar.refresh()


# --------------------------------------------------------------------------
# Sources: http(s), file://, plain directory
# --------------------------------------------------------------------------


def _is_http(base: str) -> bool:
    return base.lower().startswith(("http://", "https://"))


def _local_root(base: str) -> Path:
    if base.lower().startswith("file://"):
        parsed = urllib.parse.urlparse(base)
        return Path(urllib.request.url2pathname(parsed.path))
    return Path(base)


def _join(base: str, rel: str) -> str:
    if _is_http(base):
        return base.rstrip("/") + "/" + urllib.parse.quote(rel)
    return str(_local_root(base) / rel)


class _Response:
    """What a fetch returns: status (200/206), start offset, total length or None, a stream."""

    def __init__(self, stream, status: int, start: int, length: int | None, close):
        self.stream = stream
        self.status = status
        self.start = start
        self.length = length  # bytes this response will deliver, if known
        self._close = close

    def read(self, n: int) -> bytes:
        return self.stream.read(n)

    def close(self) -> None:
        try:
            self._close()
        except Exception:
            pass


class _NotFound(Exception):
    pass


class _RangeNotSatisfiable(Exception):
    def __init__(self, total: int | None = None):
        super().__init__("416 Range Not Satisfiable")
        self.total = total  # full size from ``Content-Range: bytes */N``, if given


class _FatalHTTP(Exception):
    pass


_CONTENT_RANGE_RE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


def _open(location: str, offset: int, timeout: float) -> _Response:
    """Open ``location`` (an http(s) URL or local path) from byte ``offset``."""
    if _is_http(location):
        headers = {"User-Agent": "nurd-pipeline-downloader/1"}
        if offset > 0:
            headers["Range"] = f"bytes={offset}-"
        req = urllib.request.Request(location, headers=headers)
        try:
            resp = urllib.request.urlopen(req, timeout=timeout)
        except urllib.error.HTTPError as e:
            code = e.code
            crange = e.headers.get("Content-Range", "") if e.headers is not None else ""
            e.close()
            if code == 404:
                raise _NotFound("HTTP 404 Not Found") from None
            if code == 416:
                m = re.match(r"bytes\s+\*/(\d+)", crange or "")
                raise _RangeNotSatisfiable(int(m.group(1)) if m else None) from None
            if code >= 500 or code in (408, 429):
                raise _Retryable(f"HTTP {code}") from None
            raise _FatalHTTP(f"HTTP {code}") from None
        status = resp.status
        clen = resp.headers.get("Content-Length")
        length = int(clen) if clen is not None and clen.strip().isdigit() else None
        start = 0
        if status == 206:
            m = _CONTENT_RANGE_RE.match(resp.headers.get("Content-Range", "") or "")
            if m is None:
                resp.close()
                raise _Retryable("206 without a usable Content-Range")
            start = int(m.group(1))
        elif status != 200:
            resp.close()
            raise _FatalHTTP(f"unexpected HTTP {status}")
        return _Response(resp, status, start, length, resp.close)
    path = Path(location)
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise _NotFound(f"no such file {path}") from None
    size = os.fstat(f.fileno()).st_size
    if offset > size:
        f.close()
        raise _RangeNotSatisfiable(size)
    f.seek(offset)
    return _Response(f, 206 if offset else 200, offset, size - offset, f.close)


_TRANSIENT = (
    _Retryable,
    urllib.error.URLError,  # includes connection refused, DNS failure (an OSError)
    http.client.HTTPException,  # IncompleteRead, RemoteDisconnected, BadStatusLine ...
    ConnectionError,
    TimeoutError,
)



def _chunks(stream, cancel: threading.Event | None):
    """``stream``'s bytes, _CHUNK at a time, until it ends; a set ``cancel`` stops it between chunks."""
    while True:
        if cancel is not None and cancel.is_set():
            raise _Cancelled()
        chunk = stream.read(_CHUNK)
        if not chunk:
            return
        yield chunk


def _sha256_file(path: Path, hasher=None, cancel: threading.Event | None = None):
    h = hasher or hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in _chunks(f, cancel):
            h.update(chunk)
    return h



# --------------------------------------------------------------------------
# The fetch loop: resume, retry, verify, rename
# --------------------------------------------------------------------------


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def _backoff_delay(attempt: int, backoff_s: float) -> float:
    return min(_MAX_BACKOFF_S, backoff_s * (2 ** (attempt - 1)))


def _sleep(delay: float, cancel: threading.Event | None) -> None:
    if cancel is not None:
        if cancel.wait(delay):
            raise _Cancelled() from None
    else:
        time.sleep(delay)


def _receive(resp: _Response, part: Path, offset: int, rel: str, location: str, *,
             expected_size: int | None, stats: _Stats, log: Callable[[str], None],
             cancel: threading.Event | None):
    """Stream ``resp`` into ``part``: appended when the server resumed at ``offset``,
    from scratch otherwise. Returns (sha256 hasher over the whole file, resumed_from,
    size, bytes received now); raises _Retryable when the stream ended early."""
    try:
        if offset > 0 and resp.status == 206 and resp.start == offset:
            mode, resumed_from = "ab", offset
            hasher = _sha256_file(part, cancel=cancel)
            log(f"{rel}: resuming at byte {offset}")
        else:
            if offset > 0:
                log(f"{rel}: server ignored the Range request; restarting from 0")
            mode, resumed_from = "wb", 0
            hasher = hashlib.sha256()
        total = resumed_from + resp.length if resp.length is not None else None
        if expected_size is not None and total is not None and total != expected_size:
            raise TraceDownloadError(
                f"size mismatch for {rel}: server reports {total} bytes, "
                f"expected {expected_size} ({location})",
                path=rel,
                url=location,
            )
        if total is not None:
            stats.grow_total(total - resumed_from)
        received = 0
        with open(part, mode) as out:
            for chunk in _chunks(resp, cancel):
                out.write(chunk)
                hasher.update(chunk)
                received += len(chunk)
                stats.add(len(chunk))
        size = resumed_from + received
        if total is not None and size != total:
            raise _Retryable(f"truncated: got {size} of {total} bytes")
        return hasher, resumed_from, size, received
    finally:
        resp.close()


def _fetch(
    location: str,
    final: Path,
    rel: str,
    *,
    expected_sha: str | None,
    expected_size: int | None = None,
    retries: int,
    backoff_s: float,
    timeout: float,
    stats: _Stats,
    log: Callable[[str], None],
    cancel: threading.Event | None = None,
) -> tuple[str, int]:
    """Fetch ``location`` to ``final`` via ``final.part``; return (sha256, size).

    On return the file is verified and under its final name. Raises
    TraceDownloadError on a permanent failure.
    """
    part = final.with_name(final.name + ".part")
    final.parent.mkdir(parents=True, exist_ok=True)
    attempt = 0
    full_restart_done = False
    t0 = time.monotonic()
    fetched = 0
    while True:
        if cancel is not None and cancel.is_set():
            raise _Cancelled()
        offset = part.stat().st_size if part.exists() else 0
        if expected_size is not None and offset > expected_size:
            log(f"{rel}: partial file larger than expected ({offset} > {expected_size}); restarting")
            part.unlink()
            offset = 0
        complete = offset > 0 and expected_size is not None and offset == expected_size
        try:
            resp = None
            if not complete:
                try:
                    resp = _open(location, offset, timeout)
                except _RangeNotSatisfiable as e:
                    if e.total is None or e.total != offset:
                        # Nothing past our offset: the .part is bogus. Start from
                        # scratch (counts as an attempt).
                        log(f"{rel}: server refused range from byte {offset}; restarting from 0")
                        part.unlink(missing_ok=True)
                        raise _Retryable("416 Range Not Satisfiable") from None
                    complete = True  # a finished transfer that was never renamed
            if complete:
                log(f"{rel}: partial file is already complete ({offset} bytes)")
                resumed_from = size = offset
                hasher = _sha256_file(part, cancel=cancel)
            else:
                hasher, resumed_from, size, received = _receive(
                    resp, part, offset, rel, location, expected_size=expected_size, stats=stats, log=log,
                    cancel=cancel)
                fetched += received
        except _NotFound as e:
            raise TraceDownloadError(
                f"missing on the server: {rel} ({location}): {e}", path=rel, url=location, not_found=True
            ) from None
        except _FatalHTTP as e:
            raise TraceDownloadError(
                f"cannot fetch {rel} ({location}): {e}", path=rel, url=location
            ) from None
        except _TRANSIENT as e:
            attempt += 1
            if attempt > retries:
                raise TraceDownloadError(
                    f"giving up on {rel} after {retries} retries ({location}): {e}",
                    path=rel,
                    url=location,
                ) from None
            delay = _backoff_delay(attempt, backoff_s)
            log(f"{rel}: {e}; retry {attempt}/{retries} in {delay:.2g} s")
            _sleep(delay, cancel)
            continue

        # Complete: verify size and checksum, then rename.
        sha = hasher.hexdigest()
        if expected_size is not None and size != expected_size:
            part.unlink(missing_ok=True)
            raise TraceDownloadError(
                f"size mismatch for {rel}: got {size} bytes, expected {expected_size} ({location})",
                path=rel,
                url=location,
            )
        if expected_sha is not None and sha != expected_sha:
            part.unlink(missing_ok=True)
            if resumed_from > 0 and not full_restart_done:
                # The kept prefix may be stale; one clean download decides.
                full_restart_done = True
                log(f"{rel}: checksum mismatch after resume; downloading again from 0")
                continue
            raise TraceDownloadError(
                f"checksum mismatch for {rel} ({location}): sha256 {sha}, expected {expected_sha}. What to do: "
                f"the file as served does not match the source's SHA256SUM; if the source is a mirror, re-copy "
                f"that file from the original bucket, or leave the part out (NURD_TRACE_PARTS) and run again",
                path=rel,
                url=location,
            )
        os.replace(part, final)
        dt = max(time.monotonic() - t0, 1e-9)
        log(
            f"downloaded {rel}: {_fmt_bytes(size)}"
            f"{f' (resumed at {_fmt_bytes(resumed_from)})' if resumed_from else ''}"
            f" in {dt:.1f} s ({_fmt_bytes(fetched / dt)}/s)"
        )
        return sha, size


def _make_log(log: Callable[[str], None] | None) -> Callable[[str], None]:
    if log is None:
        return lambda msg: None
    return log


def _make_bar(progress: bool | None, desc: str):
    if progress is None:
        try:
            progress = sys.stderr.isatty()
        except Exception:
            progress = False
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=0, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, file=sys.stderr)


def _retry_small(fn, *, what: str, retries: int, backoff_s: float, log):
    attempt = 0
    while True:
        try:
            return fn()
        except _TRANSIENT as e:
            attempt += 1
            if attempt > retries:
                raise TraceDownloadError(f"giving up on {what} after {retries} retries: {e}",
                                         transient=True) from None
            delay = _backoff_delay(attempt, backoff_s)
            log(f"{what}: {e}; retry {attempt}/{retries} in {delay:.2g} s")
            time.sleep(delay)

