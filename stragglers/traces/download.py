"""Download the public cluster traces (Google clusterdata-2011-2, Alibaba v2018/v2017).

Plain Python, no Dagster: the assets call into this module, and so can a
shell (``python -c "from stragglers.traces.download import download_google; ..."``).

Google: ``download_google`` reads the bucket's ``SHA256SUM``, selects the
requested tables and parts, and fetches them in parallel with resume (HTTP
``Range``), retries with exponential backoff, and sha256 verification.
A file only ever appears under its final name after it has been verified;
while in flight it lives at ``<name>.part``.

Alibaba: ``download_alibaba`` streams one ``.tar.gz`` archive to disk (resume,
size/sha check) and then extracts one member in stream mode, chunk by chunk.

Sources (``base_url`` / ``url``) may be ``https://``, ``http://``,
``file://`` or a plain local path.

Verification cache: ``<dest>/.verified.json`` maps each relative path to
``{"size", "mtime_ns", "sha256"}`` as recorded right after verification. A
file whose size and mtime still match its entry (and whose recorded sha256
equals the expected one) is trusted without re-hashing. Delete the manifest
to force a full re-verification.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import shutil
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

__all__ = [
    "GOOGLE_2011_URL",
    "ALIBABA_2018_URL",
    "ALIBABA_2018_MIRROR_URL",
    "ALIBABA_2017_URL",
    "DEFAULT_TABLES",
    "DEFAULT_PARTS",
    "MANIFEST_NAME",
    "DownloadReport",
    "TraceDownloadError",
    "default_trace_url",
    "download_google",
    "download_alibaba",
    "parse_parts",
    "parse_sha256sum",
]

# --------------------------------------------------------------------------
# Public locations
# --------------------------------------------------------------------------

#: Public, credential-free HTTPS view of gs://clusterdata-2011-2.
GOOGLE_2011_URL = "https://storage.googleapis.com/clusterdata-2011-2/"

#: Alibaba cluster-trace-v2018, batch_instance archive (tens of GB).
ALIBABA_2018_URL = "http://aliopentrace.oss-cn-beijing.aliyuncs.com/v2018Traces/batch_instance.tar.gz"
#: Mirror listed in alibaba/clusterdata cluster-trace-v2018/trace_2018.md.
ALIBABA_2018_MIRROR_URL = "http://clusterdata2018pubcn.oss-cn-beijing.aliyuncs.com/batch_instance.tar.gz"

#: PLACEHOLDER. Alibaba hands out the v2017 download link only after a short
#: survey (see alibaba/clusterdata cluster-trace-v2017/README.md), so there is
#: no stable public URL. Override it with ``NURD_TRACE_URL`` (or the ``url``
#: argument) pointing at the archive you were given, or at a local copy.
ALIBABA_2017_URL = "http://aliopentrace.oss-cn-beijing.aliyuncs.com/v2017Traces/batch_instance.tar.gz"

DEFAULT_TABLES: tuple[str, ...] = ("job_events", "task_events", "task_usage")
#: Default for NURD_TRACE_PARTS: small, so a first run does not fetch 41 GB.
DEFAULT_PARTS = 2

MANIFEST_NAME = ".verified.json"
SHA256SUM_NAME = "SHA256SUM"
SCHEMA_NAME = "schema.csv"

_CHUNK = 1 << 20  # 1 MiB
_MAX_BACKOFF_S = 60.0
_PART_RE = re.compile(r"^part-(\d+)-of-(\d+)\.csv\.gz$")


def default_trace_url(trace: str) -> str:
    """Public location of ``trace`` (a NURD_TRACE value other than ``synthetic``)."""
    urls = {
        "google_2011": GOOGLE_2011_URL,
        "alibaba_2018": ALIBABA_2018_URL,
        "alibaba_2017": ALIBABA_2017_URL,
    }
    try:
        return urls[trace]
    except KeyError:
        raise ValueError(
            f"NURD_TRACE={trace!r} has no download location; expected one of {sorted(urls)}"
        ) from None


_RANGE_RE = re.compile(r"^(\d+)-(\d+)$")


def _parts_error(value) -> ValueError:
    return ValueError(
        f"NURD_TRACE_PARTS must be 'all', a positive integer N (parts 0..N-1 of every table), or "
        f"per-table selections like 'task_events=0-13,job_events=all' (each value 'all', N or A-B; a bare "
        f"N or 'all' among them applies to the tables not named), got {value!r}")


def _parse_one_spec(text: str, value) -> int | str | tuple[int, ...]:
    text = text.strip().lower()
    if text == "all":
        return "all"
    m = _RANGE_RE.match(text)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        if a > b:
            raise _parts_error(value)
        return tuple(range(a, b + 1))
    try:
        n = int(text)
    except ValueError:
        raise _parts_error(value) from None
    if n < 1:
        raise _parts_error(value)
    return n


def parse_parts(value: str | int) -> int | str | dict:
    """Validate a ``NURD_TRACE_PARTS`` value.

    ``"all"`` or a positive integer N apply to every table (parts 0..N-1).
    Per-table selections ``table=SPEC`` separated by commas (SPEC ``all``, N or
    an inclusive range ``A-B``) give a dict {table: spec}; a bare ``N`` / ``all``
    item among them is the spec of the tables not named (key ``"*"``); without
    one, tables not named are not fetched.
    """
    if isinstance(value, bool):
        raise _parts_error(value)
    if isinstance(value, dict):   # already parsed
        return value
    if isinstance(value, int):
        if value < 1:
            raise _parts_error(value)
        return value
    text = str(value).strip()
    if "=" not in text:
        spec = _parse_one_spec(text, value)
        if isinstance(spec, tuple):
            raise _parts_error(value)   # a bare range names no table
        return spec
    out: dict = {}
    for item in text.split(","):
        table, eq, spec = item.partition("=")
        table = table.strip()
        key = table if eq else "*"
        spec_text = spec if eq else table
        if (eq and not re.fullmatch(r"[a-z_]+", table)) or key in out:
            raise _parts_error(value)
        parsed = _parse_one_spec(spec_text, value)
        if key == "*" and isinstance(parsed, tuple):
            raise _parts_error(value)
        out[key] = parsed
    return out


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


# --------------------------------------------------------------------------
# Verification manifest
# --------------------------------------------------------------------------


class _Manifest:
    def __init__(self, dest: Path):
        self.path = dest / MANIFEST_NAME
        self.lock = threading.Lock()
        self.entries: dict[str, dict] = {}
        try:
            data = json.loads(self.path.read_text())
            if isinstance(data, dict) and isinstance(data.get("files"), dict):
                self.entries = data["files"]
        except (OSError, ValueError):
            self.entries = {}

    def trusted(self, rel: str, path: Path, expected_sha: str | None) -> bool:
        """True if ``path`` is recorded as verified and unchanged since."""
        with self.lock:
            entry = self.entries.get(rel)
        if not entry:
            return False
        try:
            st = path.stat()
        except FileNotFoundError:
            return False
        if entry.get("size") != st.st_size or entry.get("mtime_ns") != st.st_mtime_ns:
            return False
        if expected_sha is not None and entry.get("sha256") != expected_sha:
            return False
        return True

    def record(self, rel: str, path: Path, sha: str | None, **extra) -> None:
        st = path.stat()
        entry = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha, **extra}
        with self.lock:
            self.entries[rel] = entry
            self._save()

    def forget(self, rel: str) -> None:
        with self.lock:
            if self.entries.pop(rel, None) is not None:
                self._save()

    def get(self, rel: str) -> dict | None:
        with self.lock:
            return self.entries.get(rel)

    def _save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps({"version": 1, "files": self.entries}, indent=1, sort_keys=True))
        os.replace(tmp, self.path)


def _sha256_file(path: Path, hasher=None, cancel: threading.Event | None = None):
    h = hasher or hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            if cancel is not None and cancel.is_set():
                raise _Cancelled()
            chunk = f.read(_CHUNK)
            if not chunk:
                break
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
        resumed_from = 0
        complete = offset > 0 and expected_size is not None and offset == expected_size
        try:
            if not complete:
                try:
                    resp = _open(location, offset, timeout)
                except _RangeNotSatisfiable as e:
                    if e.total is not None and e.total == offset:
                        complete = True  # a finished transfer that was never renamed
                    else:
                        # Nothing past our offset: the .part is bogus. Start from
                        # scratch (counts as an attempt).
                        log(f"{rel}: server refused range from byte {offset}; restarting from 0")
                        part.unlink(missing_ok=True)
                        raise _Retryable("416 Range Not Satisfiable") from None
            if complete:
                log(f"{rel}: partial file is already complete ({offset} bytes)")
                resumed_from = size = offset
                hasher = _sha256_file(part, cancel=cancel)
            else:
                try:
                    if offset > 0 and resp.status == 206 and resp.start == offset:
                        mode = "ab"
                        resumed_from = offset
                        hasher = _sha256_file(part, cancel=cancel)
                        log(f"{rel}: resuming at byte {offset}")
                    else:
                        if offset > 0:
                            log(f"{rel}: server ignored the Range request; restarting from 0")
                        mode = "wb"
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
                        while True:
                            if cancel is not None and cancel.is_set():
                                raise _Cancelled()
                            chunk = resp.read(_CHUNK)
                            if not chunk:
                                break
                            out.write(chunk)
                            hasher.update(chunk)
                            received += len(chunk)
                            stats.add(len(chunk))
                    fetched += received
                    size = resumed_from + received
                    if total is not None and size != total:
                        raise _Retryable(
                            f"truncated: got {size} of {total} bytes"
                        )
                finally:
                    resp.close()
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
            delay = min(_MAX_BACKOFF_S, backoff_s * (2 ** (attempt - 1)))
            log(f"{rel}: {e}; retry {attempt}/{retries} in {delay:.2g} s")
            if cancel is not None:
                if cancel.wait(delay):
                    raise _Cancelled() from None
            else:
                time.sleep(delay)
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
                f"checksum mismatch for {rel} ({location}): sha256 {sha}, expected {expected_sha}",
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
            delay = min(_MAX_BACKOFF_S, backoff_s * (2 ** (attempt - 1)))
            log(f"{what}: {e}; retry {attempt}/{retries} in {delay:.2g} s")
            time.sleep(delay)


# --------------------------------------------------------------------------
# Google clusterdata-2011-2
# --------------------------------------------------------------------------


def parse_sha256sum(text: str) -> dict[str, str]:
    """Parse ``<hex>  ./dir/file`` lines into {relative path: sha256}."""
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or not re.fullmatch(r"[0-9a-fA-F]{64}", parts[0]):
            raise TraceDownloadError(f"{SHA256SUM_NAME} line {lineno} is malformed: {line!r}")
        digest, name = parts[0].lower(), parts[1].strip()
        if name.startswith("*"):  # sha256sum binary-mode marker
            name = name[1:]
        while name.startswith("./"):
            name = name[2:]
        p = Path(name)
        if not name or p.is_absolute() or ".." in p.parts:
            raise TraceDownloadError(f"{SHA256SUM_NAME} line {lineno} names an unsafe path: {name!r}")
        out[p.as_posix()] = digest
    return out


def _parts_listed(index: dict, table: str) -> tuple[dict[int, str], str | None]:
    """{part number: relative path} of ``table``'s parts in the index, and their ``of-M``."""
    by_part: dict[int, str] = {}
    of = None
    for rel in index:
        head, _, name = rel.partition("/")
        if head != table:
            continue
        m = _PART_RE.match(name)
        if m:
            by_part[int(m.group(1))] = rel
            of = m.group(2)
    return by_part, of


def _select(index: dict, tables: Iterable[str], parts) -> tuple[list[str], dict[str, str]]:
    """The files to fetch, and {table: why it has none} for the tables left out.

    A table with no part in the index is left out and reported (a partial mirror
    is normal), unless the user named it in a per-table selection; parts that
    are requested explicitly (N, A-B) but not listed are an error naming them.
    When no requested table has any part, that is an error too (wrong source).
    """
    chosen: list[str] = []
    left_out: dict[str, str] = {}
    absent: list[str] = []
    notes: list[str] = []
    per_table = isinstance(parts, dict)
    for table in tables:
        spec = (parts.get(table, parts.get("*")) if per_table else parts)
        if spec is None:
            left_out[table] = "not selected by NURD_TRACE_PARTS"
            continue
        by_part, of = _parts_listed(index, table)
        if not by_part:
            if per_table and table in parts:
                raise TraceDownloadError(
                    f"table {table!r} is selected by NURD_TRACE_PARTS but has no parts listed in "
                    f"{SHA256SUM_NAME}", path=table)
            left_out[table] = f"no parts listed in {SHA256SUM_NAME}"
            continue
        if spec == "all":
            chosen.extend(by_part[i] for i in sorted(by_part))
            continue
        numbers = range(int(spec)) if isinstance(spec, int) else spec
        width = len(of) if of else 5
        missing_here = [i for i in numbers if i not in by_part]
        if missing_here:
            absent.extend(f"{table}/part-{i:0{width}d}-of-{of}.csv.gz" for i in missing_here)
            notes.append(f"{len(by_part)} parts listed for {table}")
        chosen.extend(by_part[i] for i in numbers if i in by_part)
    if absent:
        shown = ", ".join(absent[:6]) + (f", ... ({len(absent)} in all)" if len(absent) > 6 else "")
        raise TraceDownloadError(
            f"requested part(s) not listed in {SHA256SUM_NAME}: {shown} "
            f"({'; '.join(notes)}; NURD_TRACE_PARTS={parts})",
            path=absent[0],
        )
    if not chosen:
        raise TraceDownloadError(
            f"none of the tables {list(tables)} has parts listed in {SHA256SUM_NAME}: "
            + "; ".join(f"{t}: {why}" for t, why in left_out.items()),
            path=next(iter(left_out), None))
    return chosen, left_out


def _local_listing(base_url: str, tables: Iterable[str]) -> dict[str, None] | None:
    """A local source without SHA256SUM: its part files as an index without checksums
    (taken as they are, size-checked). None when the source is remote or has SHA256SUM."""
    if _is_http(base_url):
        return None
    root = _local_root(base_url)
    if (root / SHA256SUM_NAME).exists() or not root.is_dir():
        return None
    index: dict[str, None] = {}
    for table in tables:
        for p in sorted((root / table).glob("part-*-of-*.csv.gz")):
            index[f"{table}/{p.name}"] = None
    if (root / SCHEMA_NAME).exists():
        index[SCHEMA_NAME] = None
    return index


def _read_index(base_url: str, dest: Path, *, refresh: bool, retries: int, backoff_s: float,
                timeout: float, say) -> dict[str, str]:
    """The source's SHA256SUM as {relative path: sha256}, kept in ``dest``.

    A copy in ``dest`` is reused (no network) unless ``refresh``; a local source
    is always re-read (cheap, and a mirror that grew is seen)."""
    sums_path = dest / SHA256SUM_NAME
    if sums_path.exists() and not refresh:
        return parse_sha256sum(sums_path.read_text())
    loc = _join(base_url, SHA256SUM_NAME)

    def get_index() -> str:
        try:
            resp = _open(loc, 0, timeout)
        except _NotFound:
            raise TraceDownloadError(
                f"missing on the server: {SHA256SUM_NAME} ({loc})", path=SHA256SUM_NAME, url=loc
            ) from None
        except (_FatalHTTP, _RangeNotSatisfiable) as e:
            raise TraceDownloadError(f"cannot fetch {SHA256SUM_NAME} ({loc}): {e}",
                                     path=SHA256SUM_NAME, url=loc) from None
        try:
            data = resp.stream.read() if resp.length is None else resp.read(resp.length)
            if resp.length is not None and len(data) != resp.length:
                raise _Retryable(f"truncated: got {len(data)} of {resp.length} bytes")
            return data.decode("utf-8")
        finally:
            resp.close()

    index_text = _retry_small(get_index, what=f"{SHA256SUM_NAME} ({loc})",
                              retries=retries, backoff_s=backoff_s, log=say)
    index = parse_sha256sum(index_text)
    if not sums_path.exists() or sums_path.read_text() != index_text:
        tmp = sums_path.with_name(sums_path.name + ".part")
        tmp.write_text(index_text)
        os.replace(tmp, sums_path)
    return index


def _run_all(wanted: list[str], one: Callable[[str], None], workers: int, cancel: threading.Event) -> None:
    """``one(rel)`` for every file, in ``workers`` threads; the first error cancels the rest
    (verified files stay, in-flight ones keep their .part for a resume)."""
    if workers <= 1:
        for rel in wanted:
            one(rel)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nurd-dl") as pool:
        futures = [pool.submit(one, rel) for rel in wanted]
        try:
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
        except BaseException:  # e.g. Ctrl-C: stop the workers, keep .part files
            cancel.set()
            for fut in futures:
                fut.cancel()
            raise
        first_error = next((f.exception() for f in futures if f in done and f.exception() is not None), None)
        if first_error is not None:
            cancel.set()
            for fut in pending:
                fut.cancel()
            wait(futures)
            raise first_error
        for fut in futures:
            fut.result()


def download_google(
    base_url: str,
    dest: Path,
    *,
    tables: Iterable[str] = DEFAULT_TABLES,
    parts: int | str | dict = DEFAULT_PARTS,
    workers: int = 4,
    retries: int = 5,
    backoff_s: float = 1.0,
    log: Callable[[str], None] | None = None,
    progress: bool | None = None,
    timeout: float = 60.0,
    refresh_index: bool = False,
) -> DownloadReport:
    """Fetch ``schema.csv`` and the selected parts of ``tables`` (``parts``: see ``parse_parts``).

    ``dest`` receives the bucket layout (``dest/task_usage/part-...csv.gz``).
    ``SHA256SUM`` is fetched once and kept in ``dest``; later runs reuse it
    (no network needed when everything is already verified) unless
    ``refresh_index`` is true or the source is local. A partial mirror is taken
    as it is: tables without parts are reported in ``report.tables_missing``;
    a local directory without SHA256SUM gives its files unverified (size-checked).
    """
    t_start = time.monotonic()
    say = _make_log(log)
    parts = parse_parts(parts)
    base_url = base_url or GOOGLE_2011_URL
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    tables = tuple(tables)

    # 1. The index (SHA256SUM, or a local directory's listing).
    index = _local_listing(base_url, tables)
    if index is not None:
        say(f"{base_url} has no {SHA256SUM_NAME}: its files are taken as they are (size-checked, "
            f"not verified)")
    else:
        index = _read_index(base_url, dest, refresh=refresh_index or not _is_http(base_url),
                            retries=retries, backoff_s=backoff_s, timeout=timeout, say=say)

    # 2. Selection.
    selected, left_out = _select(index, tables, parts)
    for table, why in left_out.items():
        say(f"table {table} left out: {why} (a partial mirror; steps that need it say so)")
    wanted = [SCHEMA_NAME] + selected  # schema.csv is verified only if SHA256SUM lists it
    if SCHEMA_NAME not in index:
        say(f"{SCHEMA_NAME} is not listed in {SHA256SUM_NAME}; it is only size-checked")

    manifest = _Manifest(dest)
    report = DownloadReport(files=[dest / rel for rel in wanted], tables_missing=left_out,
                            tables={t: sum(1 for rel in selected if rel.startswith(t + "/")) for t in tables})
    rlock = threading.Lock()
    cancel = threading.Event()
    bar = _make_bar(progress, "clusterdata-2011-2")
    stats = _Stats(bar)

    def count(*, skipped=0, verified=0, unverified=0, size=0):
        with rlock:
            report.files_skipped += skipped
            report.files_verified += verified
            report.files_unverified += unverified
            report.bytes_total += size

    def one(rel: str) -> None:
        final = dest / rel
        expected = index.get(rel)
        if final.exists():
            if manifest.trusted(rel, final, expected):
                count(skipped=1, size=final.stat().st_size)
                return
            if expected is not None:
                sha = _sha256_file(final, cancel=cancel).hexdigest()
                if sha == expected:
                    manifest.record(rel, final, sha)
                    say(f"verified existing {rel}")
                    count(skipped=1, verified=1, size=final.stat().st_size)
                    return
                say(f"{rel}: existing file fails its checksum; removing and downloading again")
                final.unlink()
                manifest.forget(rel)
            else:
                # No checksum and no record: cannot vouch for it, fetch again.
                final.unlink()
        try:
            sha, size = _fetch(
                _join(base_url, rel), final, rel,
                expected_sha=expected, retries=retries, backoff_s=backoff_s,
                timeout=timeout, stats=stats, log=say, cancel=cancel,
            )
        except TraceDownloadError as e:
            if rel == SCHEMA_NAME and rel not in index and e.not_found:
                say(f"{SCHEMA_NAME} is not at the source ({e.url}); going on without it")
                report.files.remove(final)
                return
            raise
        manifest.record(rel, final, sha if expected is not None else None)
        if expected is None and rel != SCHEMA_NAME:
            count(unverified=1, size=size)
        else:
            count(verified=1, size=size)

    try:
        _run_all(wanted, one, workers, cancel)
    finally:
        if bar is not None:
            bar.close()

    report.bytes_downloaded = stats.bytes_downloaded
    report.seconds = time.monotonic() - t_start
    dt = max(report.seconds, 1e-9)
    say(
        f"clusterdata-2011-2: {len(report.files)} files ({_fmt_bytes(report.bytes_total)}) in {dest}; "
        f"downloaded {_fmt_bytes(report.bytes_downloaded)} in {report.seconds:.1f} s "
        f"({_fmt_bytes(report.bytes_downloaded / dt)}/s), "
        f"{report.files_skipped} already present"
    )
    return report


# --------------------------------------------------------------------------
# Alibaba v2018 / v2017
# --------------------------------------------------------------------------


def _archive_name(url: str) -> str:
    if _is_http(url):
        name = urllib.parse.unquote(urllib.parse.urlparse(url).path.rsplit("/", 1)[-1])
    else:
        name = _local_root(url).name
    if not name:
        raise ValueError(f"cannot derive an archive file name from {url!r}")
    return name


def _member_matches(name: str, member: str) -> bool:
    norm = name
    while norm.startswith("./"):
        norm = norm[2:]
    want = member
    while want.startswith("./"):
        want = want[2:]
    return norm == want or ("/" not in want and norm.rsplit("/", 1)[-1] == want)


def download_alibaba(
    url: str,
    dest: Path,
    *,
    member: str = "batch_instance.csv",
    expected_size: int | None = None,
    sha256: str | None = None,
    retries: int = 5,
    backoff_s: float = 1.0,
    log: Callable[[str], None] | None = None,
    progress: bool | None = None,
    timeout: float = 60.0,
    keep_archive: bool = True,
) -> DownloadReport:
    """Fetch the ``.tar.gz`` at ``url`` into ``dest`` and extract ``member`` from it.

    The archive is kept as ``dest/<archive name>`` (unless ``keep_archive`` is
    false) and the member is written to ``dest/<basename of member>``.
    ``expected_size`` (bytes) and ``sha256`` check the archive when given.
    """
    t_start = time.monotonic()
    say = _make_log(log)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    arc_name = _archive_name(url)
    archive = dest / arc_name
    out = dest / Path(member).name
    out_rel = out.name
    manifest = _Manifest(dest)
    sha256 = sha256.lower() if sha256 else None
    report = DownloadReport(files=[out])

    # Already extracted from a matching archive?
    entry = manifest.get(out_rel)
    if out.exists() and manifest.trusted(out_rel, out, None) and entry is not None:
        src = entry.get("source") or {}
        ok = src.get("archive") == arc_name
        if expected_size is not None and src.get("size") != expected_size:
            ok = False
        if sha256 is not None and src.get("sha256") not in (None, sha256):
            ok = False
        if ok:
            report.files_skipped = 1
            report.bytes_total = out.stat().st_size
            report.seconds = time.monotonic() - t_start
            say(f"{out_rel}: already extracted and verified; skipping")
            return report

    bar = _make_bar(progress, arc_name)
    stats = _Stats(bar)
    try:
        # 1. The archive.
        same_as_source = not _is_http(url) and _local_root(url).resolve() == archive.resolve()
        arc_sha = None
        have = False
        if archive.exists():
            if manifest.trusted(arc_name, archive, sha256):
                size = archive.stat().st_size
                have = expected_size is None or size == expected_size
                arc_sha = (manifest.get(arc_name) or {}).get("sha256")
            else:
                size = archive.stat().st_size
                if expected_size is not None and size != expected_size:
                    have = False
                elif sha256 is not None:
                    arc_sha = _sha256_file(archive).hexdigest()
                    have = arc_sha == sha256
                else:
                    # Only this code puts a file under the final name, after a
                    # complete, size-checked transfer.
                    have = True
                if have:
                    manifest.record(arc_name, archive, arc_sha)
                    report.files_verified += 1
            if not have and same_as_source:
                raise TraceDownloadError(
                    f"{arc_name} ({url}) is the source itself and fails its size/sha256 check",
                    path=arc_name, url=url,
                )
            if not have:
                say(f"{arc_name}: existing archive does not match; downloading again")
                archive.unlink()
                manifest.forget(arc_name)
            else:
                say(f"{arc_name}: archive already present")
        if not have:
            arc_sha, _size = _fetch(
                url if _is_http(url) else str(_local_root(url)),
                archive, arc_name,
                expected_sha=sha256, expected_size=expected_size,
                retries=retries, backoff_s=backoff_s, timeout=timeout,
                stats=stats, log=say,
            )
            manifest.record(arc_name, archive, arc_sha)
            report.files_verified += 1
        arc_size = archive.stat().st_size
        report.bytes_downloaded = stats.bytes_downloaded
    finally:
        if bar is not None:
            bar.close()

    # 2. Stream-extract the member.
    tmp = out.with_name(out.name + ".part")
    t_x = time.monotonic()
    found = False
    try:
        with open(archive, "rb") as raw, tarfile.open(fileobj=raw, mode="r|gz") as tf:
            for ti in tf:
                if not _member_matches(ti.name, member):
                    continue
                if not ti.isfile():
                    continue
                src = tf.extractfile(ti)
                if src is None:
                    continue
                with open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
                if tmp.stat().st_size != ti.size:
                    raise tarfile.ReadError(
                        f"member {ti.name} truncated: {tmp.stat().st_size} of {ti.size} bytes"
                    )
                found = True
                break
    except (tarfile.TarError, EOFError, zlib.error, OSError) as e:
        if isinstance(e, OSError) and not isinstance(e, (EOFError,)) and e.errno is not None:
            tmp.unlink(missing_ok=True)
            raise  # a local disk error, not a corrupt archive
        tmp.unlink(missing_ok=True)
        manifest.forget(arc_name)
        if not same_as_source:  # never delete the user's own source file
            archive.unlink(missing_ok=True)
        raise TraceDownloadError(
            f"archive {arc_name} ({url}) is corrupt"
            f"{'' if same_as_source else ' and was removed'}: {e}", path=arc_name, url=url
        ) from None
    if not found:
        tmp.unlink(missing_ok=True)
        raise TraceDownloadError(
            f"member {member!r} not found in archive {arc_name} ({url})", path=member, url=url
        )
    os.replace(tmp, out)
    manifest.record(
        out_rel, out, None,
        source={"archive": arc_name, "size": arc_size, "sha256": arc_sha},
    )
    say(f"extracted {out_rel} from {arc_name}: {_fmt_bytes(out.stat().st_size)} "
        f"in {time.monotonic() - t_x:.1f} s")
    if keep_archive:
        report.files.append(archive)
    elif not same_as_source:
        archive.unlink()
        manifest.forget(arc_name)
    report.bytes_total = arc_size
    report.seconds = time.monotonic() - t_start
    return report
