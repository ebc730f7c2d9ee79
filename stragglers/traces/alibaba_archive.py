"""Alibaba v2018 / v2017: one ``.tar.gz`` archive streamed to disk (resume, size and
sha256 check through ``transport``), then one member extracted in stream mode,
chunk by chunk.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import time
import urllib.parse
import zlib
from pathlib import Path
from typing import Callable

from stragglers.traces.manifest import _Manifest
from stragglers.traces.transport import (
    _CHUNK, DownloadReport, TraceDownloadError, _Stats, _fetch, _fmt_bytes, _is_http, _local_root, _make_bar,
    _make_log, _sha256_file,
)


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


def _extracted_from(manifest: _Manifest, out: Path, arc_name: str, expected_size: int | None,
                    sha256: str | None) -> bool:
    """True when ``out`` is recorded as extracted, unchanged, from a matching archive."""
    entry = manifest.get(out.name)
    if not (out.exists() and manifest.trusted(out.name, out, None) and entry is not None):
        return False
    src = entry.get("source") or {}
    if src.get("archive") != arc_name:
        return False
    if expected_size is not None and src.get("size") != expected_size:
        return False
    if sha256 is not None and src.get("sha256") not in (None, sha256):
        return False
    return True


def _archive_in_place(archive: Path, manifest: _Manifest, *, expected_size: int | None,
                      sha256: str | None, report: DownloadReport) -> tuple[bool, str | None]:
    """Is the archive already in ``dest`` and good? Returns (usable, its sha256 if known)."""
    arc_name = archive.name
    if manifest.trusted(arc_name, archive, sha256):
        size = archive.stat().st_size
        return expected_size is None or size == expected_size, (manifest.get(arc_name) or {}).get("sha256")
    size = archive.stat().st_size
    arc_sha = None
    if expected_size is not None and size != expected_size:
        return False, None
    if sha256 is not None:
        arc_sha = _sha256_file(archive).hexdigest()
        if arc_sha != sha256:
            return False, arc_sha
    # Only this code puts a file under the final name, after a complete, size-checked transfer.
    manifest.record(arc_name, archive, arc_sha)
    report.files_verified += 1
    return True, arc_sha


def _extract_member(archive: Path, member: str, out: Path, *, url: str, same_as_source: bool,
                    manifest: _Manifest) -> None:
    """Stream ``member`` of ``archive`` to ``out`` (via ``out.part``); a corrupt archive is
    removed (unless it is the user's own source) and named in the error."""
    arc_name = archive.name
    tmp = out.with_name(out.name + ".part")
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
    manifest = _Manifest(dest)
    sha256 = sha256.lower() if sha256 else None
    report = DownloadReport(files=[out])

    if _extracted_from(manifest, out, arc_name, expected_size, sha256):
        report.files_skipped = 1
        report.bytes_total = out.stat().st_size
        report.seconds = time.monotonic() - t_start
        say(f"{out.name}: already extracted and verified; skipping")
        return report

    # 1. The archive.
    bar = _make_bar(progress, arc_name)
    stats = _Stats(bar)
    try:
        same_as_source = not _is_http(url) and _local_root(url).resolve() == archive.resolve()
        have, arc_sha = False, None
        if archive.exists():
            have, arc_sha = _archive_in_place(archive, manifest, expected_size=expected_size, sha256=sha256,
                                              report=report)
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
    t_x = time.monotonic()
    _extract_member(archive, member, out, url=url, same_as_source=same_as_source, manifest=manifest)
    manifest.record(out.name, out, None, source={"archive": arc_name, "size": arc_size, "sha256": arc_sha})
    say(f"extracted {out.name} from {arc_name}: {_fmt_bytes(out.stat().st_size)} "
        f"in {time.monotonic() - t_x:.1f} s")
    if keep_archive:
        report.files.append(archive)
    elif not same_as_source:
        archive.unlink()
        manifest.forget(arc_name)
    report.bytes_total = arc_size
    report.seconds = time.monotonic() - t_start
    return report
