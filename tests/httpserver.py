"""A loopback HTTP server that serves a directory laid out like a trace bucket.

Reusable by any test that needs a "remote" trace without network access:

    with TraceServer(root) as srv:
        srv.cut_after["task_usage/part-00000-of-00500.csv.gz"] = 1000
        download_google(srv.url, dest, ...)
        srv.requests_for("task_usage/part-00000-of-00500.csv.gz")

Faults (keys are paths relative to the root, e.g. ``job_events/part-...``):
- ``cut_after[path] = n``: the next response for ``path`` sends its headers
  (full Content-Length) and only ``n`` body bytes, then closes the connection.
  One-shot; later requests are served normally and honour ``Range``.
- ``cut_always[path] = n``: like ``cut_after`` but for every request.
- ``fail_first[path] = (k, status)``: the first ``k`` requests get ``status``.
- ``corrupt``: set of paths served with one byte flipped (same length).
- ``missing``: set of paths answered with 404.
- ``ignore_range``: set of paths served in full (200) even when a Range is sent.

``log`` records every request: path, range header, status, bytes sent.

``make_bucket(root, ...)`` writes a small bucket (gzip CSV parts, schema.csv,
SHA256SUM) and returns {relative path: bytes}.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import random
import re
import tarfile
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path


@dataclass
class RequestRecord:
    path: str
    range: str | None
    status: int
    bytes_sent: int


_RANGE_RE = re.compile(r"bytes=(\d+)-(\d*)$")


class TraceServer:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.lock = threading.Lock()
        self.log: list[RequestRecord] = []
        self.cut_after: dict[str, int] = {}
        self.cut_always: dict[str, int] = {}
        self.fail_first: dict[str, tuple[int, int]] = {}
        self.corrupt: set[str] = set()
        self.missing: set[str] = set()
        self.ignore_range: set[str] = set()
        self.delay_s = 0.0   # a slow link: each file's body waits this long before it is sent
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> "TraceServer":
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_GET(self):
                server._handle(self)

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "TraceServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/"

    # -- inspection --------------------------------------------------------
    def requests_for(self, rel: str) -> list[RequestRecord]:
        with self.lock:
            return [r for r in self.log if r.path == rel]

    def paths_requested(self) -> list[str]:
        with self.lock:
            return [r.path for r in self.log]

    def clear_log(self) -> None:
        with self.lock:
            self.log.clear()

    # -- serving -----------------------------------------------------------
    def _record(self, rel, rng, status, sent):
        with self.lock:
            self.log.append(RequestRecord(rel, rng, status, sent))

    def _handle(self, h: http.server.BaseHTTPRequestHandler) -> None:
        rel = urllib.parse.unquote(urllib.parse.urlparse(h.path).path).lstrip("/")
        rng = h.headers.get("Range")
        path = (self.root / rel).resolve()

        with self.lock:
            status_fault = None
            if rel in self.fail_first:
                k, code = self.fail_first[rel]
                if k > 0:
                    self.fail_first[rel] = (k - 1, code)
                    status_fault = code
            missing = rel in self.missing
            cut = self.cut_after.pop(rel, None)
            if cut is None:
                cut = self.cut_always.get(rel)
            corrupt = rel in self.corrupt
            ignore_range = rel in self.ignore_range

        def send_error(code):
            body = f"error {code}\n".encode()
            self._record(rel, rng, code, 0)  # before replying: the client may act at once
            h.send_response(code)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)

        if status_fault is not None:
            return send_error(status_fault)
        if missing or not path.is_file() or self.root not in path.parents:
            return send_error(404)

        data = path.read_bytes()
        if corrupt and data:
            i = len(data) // 2
            data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
        size = len(data)
        start, end, status = 0, size - 1, 200
        if rng and not ignore_range:
            m = _RANGE_RE.match(rng.strip())
            if m:
                start = int(m.group(1))
                end = int(m.group(2)) if m.group(2) else size - 1
                if start >= size:
                    self._record(rel, rng, 416, 0)
                    h.send_response(416)
                    h.send_header("Content-Range", f"bytes */{size}")
                    h.send_header("Content-Length", "0")
                    h.end_headers()
                    return
                end = min(end, size - 1)
                status = 206
        body = data[start:end + 1]
        sent = body if cut is None else body[:cut]
        if self.delay_s:
            time.sleep(self.delay_s)
        self._record(rel, rng, status, len(sent))
        h.send_response(status)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("Content-Length", str(len(body)))
        if status == 206:
            h.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        h.send_header("Accept-Ranges", "bytes")
        h.end_headers()
        h.wfile.write(sent)
        h.wfile.flush()
        h.close_connection = True


# ---------------------------------------------------------------------------
# Bucket generation
# ---------------------------------------------------------------------------


def _gz(text: str, seed: int) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=seed) as f:
        f.write(text.encode())
    return buf.getvalue()


def _rows(table: str, part: int, n: int, rng: random.Random) -> str:
    lines = []
    for i in range(n):
        t = 600_000_000 + part * 300_000_000 + i * 1000
        job = 3418309 + rng.randrange(50)
        if table == "job_events":
            lines.append(f"{t},,{job},{rng.randrange(9)},user{rng.randrange(9)},3,name{job},lname{job}")
        elif table == "task_events":
            lines.append(f"{t},,{job},{rng.randrange(20)},{rng.randrange(1 << 32)},{rng.randrange(9)},"
                         f"u,2,0,0.0625,0.0318,0.0001,0")
        else:
            lines.append(f"{t},{t + 300_000_000},{job},{rng.randrange(20)},{rng.randrange(1 << 32)},"
                         f"{rng.random():.6f},0.06787,0.07568,0.001156,0.001503,0.06787,2.861e-06,"
                         f"0.0001869,0.03967,0.0003567,2.445,0.007243,0,1,")
    return "\n".join(lines) + "\n"


def make_bucket(
    root: Path,
    tables=("job_events", "task_events", "task_usage"),
    n_parts: int = 3,
    of: int = 500,
    rows: int = 400,
    seed: int = 0,
    schema_in_sums: bool = True,
) -> dict[str, bytes]:
    """Write a tiny clusterdata-2011-2 look-alike under ``root``."""
    root = Path(root)
    rng = random.Random(seed)
    files: dict[str, bytes] = {}
    files["schema.csv"] = (
        b"file pattern,field number,content,format,mandatory\n"
        b"task_usage/part-?????-of-?????.csv.gz,1,start time,INTEGER,YES\n"
    )
    for table in tables:
        for p in range(n_parts):
            rel = f"{table}/part-{p:05d}-of-{of:05d}.csv.gz"
            files[rel] = _gz(_rows(table, p, rows, rng), seed + p)
    for rel, data in files.items():
        out = root / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    lines = [
        f"{hashlib.sha256(data).hexdigest()}  ./{rel}"
        for rel, data in sorted(files.items())
        if schema_in_sums or rel != "schema.csv"
    ]
    (root / "SHA256SUM").write_text("\n".join(lines) + "\n")
    return files


def make_tar_gz(path: Path, members: dict[str, bytes]) -> bytes:
    """Write a .tar.gz holding ``members`` to ``path``; return its bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mtime = 0
            tf.addfile(ti, io.BytesIO(data))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return buf.getvalue()
