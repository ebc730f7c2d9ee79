"""The trace on disk, and the observable source that says when it changed."""


import dagster as dg
import pandas as pd

import socket
import urllib.error

from stragglers.traces.download import TraceDownloadError
from stragglers.warehouse.freshness import files_digest
from stragglers.traces.fetch import fetch_trace, source_version
from .resources import PipelineSettings

from .common import automated_asset, md_table


@dg.observable_source_asset(
    name="trace_source",
    group_name="ingest",
    description="The configured trace's source (NURD_TRACE, NURD_TRACE_URL). Its data version is a digest "
                "of what identifies the content: SHA256SUM of a bucket or mirror; names, sizes and mtimes "
                "of a local directory's files; generator version + seed + scale of the embedded trace. "
                "A new version re-runs everything downstream.",
)
def trace_source(context: dg.AssetExecutionContext, nurd: PipelineSettings) -> dg.DataVersion:
    version = source_version(nurd.trace, nurd.data_dir, url=nurd.trace_url, scale=nurd.scale)
    context.log.info(f"trace {nurd.trace}: data version {version}")
    return dg.DataVersion(version)


@automated_asset(
    deps=["trace_source"],
    group_name="ingest",
    kinds={"python"},
    retry_policy=dg.RetryPolicy(max_retries=3, delay=10, backoff=dg.Backoff.EXPONENTIAL),
)
def raw_trace(context: dg.AssetExecutionContext, nurd: PipelineSettings) -> dg.MaterializeResult:
    """The configured trace (NURD_TRACE, default the embedded `synthetic` trace) under $NURD_DATA_DIR/raw/<trace>/,
    every file verified against SHA256SUM. Google: the parts chosen by NURD_TRACE_PARTS from NURD_TRACE_URL (http,
    https, file:// or a directory laid out like the bucket), downloaded in parallel, resumed and retried; a partial
    mirror (tables without parts, or a local directory without SHA256SUM) is taken as it is and the missing tables
    are listed in the metadata. Alibaba: batch_instance.tar.gz streamed and unpacked."""
    try:
        nurd.settings()   # every setting checked before any work
        report = fetch_trace(nurd.trace, nurd.data_dir, url=nurd.trace_url, parts=nurd.parts,
                             workers=nurd.download_workers, scale=nurd.scale, log=context.log.info)
    except Exception as e:
        if is_network_error(e):
            raise  # the RetryPolicy tries the step again later
        # a setting, or a corrupt or missing file at the source: retrying cannot help
        raise dg.Failure(description=f"{type(e).__name__}: {e}", allow_retries=False) from e
    for table, why in report["tables_missing"].items():
        context.log.warning(f"{nurd.trace}: table {table} is absent ({why}); the steps that need it say so "
                            f"and the others run")
    tables = pd.DataFrame([{"table": t, "parts": n, "status": "present" if n else
                            f"absent: {report['tables_missing'].get(t, '')}"}
                           for t, n in report["tables"].items()])
    files = [p for p in nurd.raw_path.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return dg.MaterializeResult(data_version=dg.DataVersion(files_digest(files)), metadata={
        "trace": nurd.trace,
        "tables": md_table(tables) if len(tables) else dg.MetadataValue.md("(one archive)"),
        "tables_missing": ", ".join(report["tables_missing"]) or "none",
        "files_unverified": report["files_unverified"],
        "path": dg.MetadataValue.path(report["path"]),
        "files": report["files"],
        "bytes": report["bytes"],
        "files_verified": report["files_verified"],
        "files_skipped": report["files_skipped"],
        "seconds": report["seconds"],
    })


def is_network_error(e: BaseException) -> bool:
    """Errors a later attempt may not meet (the only ones raw_trace's RetryPolicy retries)."""
    if isinstance(e, TraceDownloadError):
        return e.transient
    return isinstance(e, (urllib.error.URLError, ConnectionError, TimeoutError, socket.timeout))


# Observing the source is a job of its own: the schedule runs it, tests execute it.
observe_trace_source = dg.define_asset_job(
    "observe_trace_source", selection=dg.AssetSelection.assets(trace_source.key),
    description="Observe the trace source and record its data version.")
