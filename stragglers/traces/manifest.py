"""Verification of trace files: the source's ``SHA256SUM`` index and the local
verification cache.

Verification cache: ``<dest>/.verified.json`` maps each relative path to
``{"size", "mtime_ns", "sha256"}`` as recorded right after verification. A
file whose size and mtime still match its entry (and whose recorded sha256
equals the expected one) is trusted without re-hashing. Delete the manifest
to force a full re-verification.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from stragglers.traces.transport import TraceDownloadError

MANIFEST_NAME = ".verified.json"
SHA256SUM_NAME = "SHA256SUM"


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

