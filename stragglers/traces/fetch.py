"""Put the configured trace under ``<data_dir>/raw/<trace>/`` (Dagster-free).

- ``synthetic``: the embedded Google-format trace, generated locally;
- ``synthetic_alibaba``: the embedded Alibaba-2018-format trace (generated,
  then unpacked by the same streaming code as the real archive);
- ``google_2011``: the public bucket (or a mirror / local copy), verified;
- ``alibaba_2018`` / ``alibaba_2017``: ``batch_instance.tar.gz``, streamed;
- ``spark_eventlog``: read where NURD_TRACE_URL points, nothing copied (its logs listed).
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from stragglers.trace_formats import TraceFormat, trace_format
from stragglers.traces import download
from stragglers.traces.alibaba_archive import download_alibaba
from stragglers.traces.google_parts import download_google
from stragglers.traces.spark_eventlog import discover
from stragglers.traces.synth import GENERATOR_VERSION, TRUTH_VERSION, generate_alibaba_2018, generate_google


@dataclass(frozen=True)
class SyntheticScale:
    seed: int = 2011
    n_jobs: int = 48
    n_parts: int = 8
    cause_mix: str = "hound"

    def identity(self) -> dict:
        """What names the generated content: the default cause mix is left out, so a trace generated
        before there were mixes keeps its stamp and version."""
        d = asdict(self)
        if d["cause_mix"] == SyntheticScale.cause_mix:
            del d["cause_mix"]
        return d


def raw_dir(data_dir: Path | str, trace: str) -> Path:
    return Path(data_dir) / "raw" / trace


def trace_dir(data_dir: Path | str, trace: str, url: str = "") -> Path:
    """Where the trace's files are read: ``raw_dir``, or, for a format read in place (Spark event
    logs), the directory NURD_TRACE_URL names (a plain path or file://)."""
    if not trace_format(trace).read_in_place:
        return raw_dir(data_dir, trace)
    if not url:
        raise ValueError(f"setting NURD_TRACE_URL is empty: NURD_TRACE={trace} reads the directory it names "
                         f"(spark.eventLog.dir, or the History Server's log directory)")
    return Path(url.removeprefix("file://"))


def truth_dir(data_dir: Path | str, trace: str) -> Path:
    """Where the embedded trace's ground truth goes (truth_jobs/truth_tasks.parquet): beside the
    trace directory, never inside it (the trace directory holds only what the real bucket holds)."""
    return Path(data_dir) / "truth" / trace


def alibaba_csv(data_dir: Path | str, trace: str) -> Path:
    return raw_dir(data_dir, trace) / "batch_instance.csv"


def _dir_stats(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return len(files), sum(p.stat().st_size for p in files)


# --- how each kind of trace gets on disk: generated (embedded) or downloaded, by layout --------


def _generate_google(fmt: TraceFormat, dest: Path, *, url, parts, workers, scale, log):
    stamp = dest / ".generated.json"
    want = {"generator_version": GENERATOR_VERSION, "truth_version": TRUTH_VERSION, **scale.identity()}
    truth = truth_dir(dest.parent.parent, dest.name)
    generated = not (stamp.exists() and json.loads(stamp.read_text()) == want
                     and (truth / "truth_tasks.parquet").exists())
    if generated:
        log(f"generating the embedded trace at {dest} ({want})")
        generate_google(dest, seed=scale.seed, n_jobs=scale.n_jobs, n_parts=scale.n_parts, truth_dir=truth,
                        cause_mix=scale.cause_mix)
        stamp.write_text(json.dumps(want))

    # The generated bucket is verified like a download: every file against SHA256SUM.
    # Its per-file "verified existing" lines and "downloaded 0 B" total would read as if
    # nothing happened, so only unusual lines (a checksum mismatch) pass through.
    def unusual(msg: str) -> None:
        if not msg.startswith(("verified existing", "clusterdata-2011-2:")):
            log(msg)

    report = download_google(str(dest), dest, parts="all", log=unusual)
    what = "generated" if generated else "reused (generated earlier with the same settings)"
    log(f"embedded trace {what}: {len(report.files)} files, {report.bytes_total / 1e6:.1f} MB in {dest}; "
        f"{report.files_verified} hashed against SHA256SUM now, {len(report.files) - report.files_verified} "
        f"unchanged since hashed")
    report.files_skipped = int(not generated)
    return report


def _generate_alibaba(fmt: TraceFormat, dest: Path, *, url, parts, workers, scale, log):
    src = dest.parent / "_synthetic_alibaba_archive"
    log(f"generating the embedded Alibaba-format archive at {src} (seed {scale.seed}, {scale.n_jobs} jobs); "
        f"it is then unpacked by the same code as a downloaded archive ('downloaded' below = copied from it)")
    generate_alibaba_2018(src, seed=scale.seed, n_jobs=scale.n_jobs)
    report = download_alibaba(src.resolve().as_uri() + "/batch_instance.tar.gz", dest, log=log)
    report.files_skipped = 0
    return report


def _download_google_bucket(fmt: TraceFormat, dest: Path, *, url, parts, workers, scale, log):
    return download_google(url or fmt.default_url, dest, parts=parts, workers=workers, log=log)


def _download_alibaba_archive(fmt: TraceFormat, dest: Path, *, url, parts, workers, scale, log):
    return download_alibaba(url or fmt.default_url, dest, log=log)


#: (layout, embedded) -> the function putting such a trace under ``dest``; returns a DownloadReport.
FETCHERS: dict[tuple[str, bool], Callable] = {
    ("google", True): _generate_google,
    ("google", False): _download_google_bucket,
    ("alibaba", True): _generate_alibaba,
    ("alibaba", False): _download_alibaba_archive,
}


def fetch_trace(trace: str, data_dir: Path | str, *, url: str = "", parts: int | str = 2, workers: int = 4,
                scale: SyntheticScale = SyntheticScale(), log: Callable[[str], None] = print) -> dict:
    """Materialize ``trace`` on disk (the fetcher of its layout, generated or downloaded); returns metadata
    (path, files, bytes, verified, skipped, unverified, tables present and missing, seconds)."""
    fmt = trace_format(trace)
    started = time.perf_counter()
    if fmt.read_in_place:
        return _in_place(trace, trace_dir(data_dir, trace, url), started)
    dest = raw_dir(data_dir, trace)
    fetcher = FETCHERS[fmt.layout, fmt.embedded]
    report = fetcher(fmt, dest, url=url, parts=parts, workers=workers, scale=scale, log=log)
    n_files, n_bytes = _dir_stats(dest)
    return {"path": str(dest), "files": n_files, "bytes": n_bytes, "files_verified": report.files_verified,
            "files_skipped": report.files_skipped, "files_unverified": report.files_unverified,
            "tables": dict(report.tables), "tables_missing": dict(report.tables_missing),
            "seconds": round(time.perf_counter() - started, 3)}


def _in_place(trace: str, where: Path, started: float) -> dict:
    """A trace read where it lies (Spark event logs): nothing copied, its logs listed; a file that is
    not a log is counted (staging says which and why)."""
    if not where.is_dir():
        raise FileNotFoundError(f"setting NURD_TRACE_URL={where} is not a directory: NURD_TRACE={trace} reads "
                                f"a directory of Spark event logs")
    logs, not_logs = discover(where)
    files = [f for log in logs for f in log.files]
    return {"path": str(where), "files": len(files), "bytes": sum(f.stat().st_size for f in files),
            "files_verified": 0, "files_skipped": len(not_logs), "files_unverified": len(files),
            "tables": {"event_logs": len(logs)}, "tables_missing": {} if logs else {"event_logs": "no event log"},
            "seconds": round(time.perf_counter() - started, 3)}


def source_version(trace: str, data_dir: Path | str, *, url: str = "",
                   scale: SyntheticScale = SyntheticScale()) -> str:
    """A digest of what identifies the trace's content, without reading the data:

    - embedded trace: generator version + seed + scale;
    - a remote bucket or mirror (http/https): its SHA256SUM (one small request);
    - a remote archive (Alibaba): its Content-Length, ETag and Last-Modified;
    - a local directory or file (plain path or file://): names, sizes and mtimes
      of its files, and the content of SHA256SUM.
    """
    h = hashlib.sha256(trace.encode())
    fmt = trace_format(trace)
    if fmt.embedded:
        h.update(json.dumps({"generator_version": GENERATOR_VERSION, **scale.identity()}).encode())
        return h.hexdigest()[:16]
    base = url or download.default_trace_url(trace)
    local = Path(base[7:] if base.startswith("file://") else base)
    if "://" not in base or base.startswith("file://"):
        # a local copy: SHA256SUM if any, plus names, sizes and mtimes of every file
        # (a changed file is seen even when nobody updated SHA256SUM)
        if local.is_file():
            files = [local]
            root = local.parent
        elif local.is_dir():
            files = sorted(p for p in local.rglob("*") if p.is_file())
            root = local
        else:
            raise FileNotFoundError(f"trace source {base} (NURD_TRACE_URL) does not exist")
        for p in files:
            st = p.stat()
            h.update(f"{p.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
            if p.name == "SHA256SUM":
                h.update(p.read_bytes())
        return h.hexdigest()[:16]
    if fmt.is_google_layout:
        with urllib.request.urlopen(base.rstrip("/") + "/SHA256SUM", timeout=30) as r:
            h.update(r.read())
    else:
        req = urllib.request.Request(base, method="HEAD")
        with urllib.request.urlopen(req, timeout=30) as r:
            h.update(f"{r.headers.get('Content-Length')}:{r.headers.get('ETag')}:{r.headers.get('Last-Modified')}".encode())
    return h.hexdigest()[:16]
