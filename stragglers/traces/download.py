"""Download the public cluster traces (Google clusterdata-2011-2, Alibaba v2018/v2017).

Plain Python, no Dagster: the assets call into this module, and so can a
shell (``python -c "from stragglers.traces.download import download_google; ..."``).
The work is split by concern:

- ``transport``: http(s) / file:// / directory sources, resume, retries,
  sha256 while streaming, publish by rename (``<name>.part`` in flight);
- ``manifest``: the source's ``SHA256SUM`` and the local verification cache;
- ``google_parts``: which tables and parts (``NURD_TRACE_PARTS``), partial mirrors;
- ``alibaba_archive``: one ``.tar.gz`` streamed, one member extracted.

Public locations are the trace formats' (``stragglers.trace_formats``).
"""

from __future__ import annotations

from stragglers.trace_formats import (
    ALIBABA_2017_URL, ALIBABA_2018_MIRROR_URL, ALIBABA_2018_URL, FORMATS, GOOGLE_2011_URL,
)
from stragglers.traces.alibaba_archive import download_alibaba
from stragglers.traces.google_parts import DEFAULT_PARTS, DEFAULT_TABLES, SCHEMA_NAME, download_google, parse_parts
from stragglers.traces.manifest import MANIFEST_NAME, SHA256SUM_NAME, parse_sha256sum
from stragglers.traces.transport import DownloadReport, TraceDownloadError

__all__ = [
    "GOOGLE_2011_URL",
    "ALIBABA_2018_URL",
    "ALIBABA_2018_MIRROR_URL",
    "ALIBABA_2017_URL",
    "DEFAULT_TABLES",
    "DEFAULT_PARTS",
    "MANIFEST_NAME",
    "SHA256SUM_NAME",
    "SCHEMA_NAME",
    "DownloadReport",
    "TraceDownloadError",
    "default_trace_url",
    "download_google",
    "download_alibaba",
    "parse_parts",
    "parse_sha256sum",
]


def default_trace_url(trace: str) -> str:
    """Public location of ``trace`` (a NURD_TRACE value other than the embedded ones)."""
    urls = {name: f.default_url for name, f in FORMATS.items() if f.default_url}
    try:
        return urls[trace]
    except KeyError:
        raise ValueError(
            f"NURD_TRACE={trace!r} has no download location; expected one of {sorted(urls)}"
        ) from None
