"""Google clusterdata-2011-2: which parts of which tables to fetch (``NURD_TRACE_PARTS``),
from a bucket, a mirror or a local directory, complete or partial.

``download_google`` reads the source's ``SHA256SUM`` (or, for a local directory
without one, its listing), selects tables and parts, and fetches them in
parallel through ``transport`` (resume, retry, sha256), recording each
verified file in the manifest.
"""

from __future__ import annotations

import os
import re
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable, Iterable

from stragglers.settings.traces import EVENT_TABLES, parse_parts  # noqa: F401  (the grammar of NURD_TRACE_PARTS)
from stragglers.trace_formats import GOOGLE_2011_URL
from stragglers.traces.synth.formats import EMPTY_PARTS_MARKER
from stragglers.traces.manifest import SHA256SUM_NAME, _Manifest, parse_sha256sum
from stragglers.traces.transport import (
    DownloadReport, TraceDownloadError, _FatalHTTP, _NotFound, _RangeNotSatisfiable, _Retryable, _Stats,
    _fetch, _fmt_bytes, _is_http, _join, _local_root, _make_bar, _make_log, _open, _retry_small, _sha256_file,
)

# machine_events (one part, ~0.35 MB) gives the machines' capacities to node ranking (docs/NODES.md).
DEFAULT_TABLES: tuple[str, ...] = ("job_events", "task_events", "task_usage", "machine_events")
#: Default for NURD_TRACE_PARTS: small, so a first run does not fetch 41 GB.
DEFAULT_PARTS = 2
#: How often a download logs its progress (bytes, parts, rate, time left), in seconds.
PROGRESS_EVERY_S = 10.0
SCHEMA_NAME = "schema.csv"
_PART_RE = re.compile(r"^part-(\d+)-of-(\d+)\.csv\.gz$")


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
        if isinstance(spec, int) and of is not None and int(of) == 1:
            # a table stored in one part (machine_events) is fetched whole by any count N
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


def download_progress(*, done: int, total: int, fetched_files: int, fetched_bytes: int, seconds: float) -> str:
    """One progress line: files done (fetched or already present) of all, bytes fetched, rate and
    the time left, estimated from the files still to do at the mean size of the files fetched so
    far (parts of one table are of similar size; unknown until one is fetched)."""
    rate = fetched_bytes / max(seconds, 1e-9)
    line = (f"download progress: {done}/{total} files, {_fmt_bytes(fetched_bytes)} fetched in {seconds:.0f} s "
            f"({_fmt_bytes(rate)}/s)")
    if done < total and fetched_files > 0 and rate > 0:
        left_s = (total - done) * (fetched_bytes / fetched_files) / rate
        line += f", about {left_s / 60:.0f} min left" if left_s >= 120 else f", about {left_s:.0f} s left"
    return line


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
    progress_every_s: float = PROGRESS_EVERY_S,
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
    # schema.csv is verified only if SHA256SUM lists it; a local copy of a trace written by our
    # generators carries their marker (parts with no rows on purpose), which the copy passes on
    marked = (not _is_http(base_url) and (_local_root(base_url) / EMPTY_PARTS_MARKER).is_file()
              and _local_root(base_url).resolve() != dest.resolve())   # (the embedded trace verifies itself in place)
    wanted = [SCHEMA_NAME] + ([EMPTY_PARTS_MARKER] if marked else []) + selected
    if SCHEMA_NAME not in index:
        say(f"{SCHEMA_NAME} is not listed in {SHA256SUM_NAME}; it is only size-checked")

    manifest = _Manifest(dest)
    report = DownloadReport(files=[dest / rel for rel in wanted], tables_missing=left_out,
                            tables={t: sum(1 for rel in selected if rel.startswith(t + "/")) for t in tables})
    rlock = threading.Lock()
    cancel = threading.Event()
    bar = _make_bar(progress, "clusterdata-2011-2")
    stats = _Stats(bar)

    files_done = {"done": 0, "fetched": 0}   # for the progress lines: one count() per file

    def count(*, skipped=0, verified=0, unverified=0, size=0):
        with rlock:
            files_done["done"] += 1
            files_done["fetched"] += not skipped
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
                    manifest.record(rel, final, sha, source=_join(base_url, rel))
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
        manifest.record(rel, final, sha if expected is not None else None, source=_join(base_url, rel))
        if rel == EMPTY_PARTS_MARKER:
            count(size=size)             # a note, not a part: neither verified nor unverified
        elif expected is None and rel != SCHEMA_NAME:
            count(unverified=1, size=size)
        else:
            count(verified=1, size=size)

    # a log line every progress_every_s while files are fetched: a month of events takes minutes
    # and the log (Dagster's, a file) is where a non-interactive run shows it is alive
    finished = threading.Event()

    def report_progress() -> None:
        while not finished.wait(progress_every_s):
            with rlock:
                done, fetched = files_done["done"], files_done["fetched"]
            say(download_progress(done=done, total=len(wanted), fetched_files=fetched,
                                  fetched_bytes=stats.bytes_downloaded, seconds=time.monotonic() - t_start))

    ticker = threading.Thread(target=report_progress, name="nurd-dl-progress", daemon=True)
    ticker.start()
    try:
        _run_all(wanted, one, workers, cancel)
    finally:
        finished.set()
        ticker.join()
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
