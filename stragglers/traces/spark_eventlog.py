"""Spark event logs as Spark writes them (Dagster-free, no DuckDB): which logs a directory holds,
their codec, and their lines, streamed.

A directory as ``spark.eventLog.dir`` or the History Server has it holds, per application:
- a single-file log ``<appId>[_<attemptId>][.<codec>][.inprogress]``;
- or a rolling log, a folder ``eventlog_v2_<appId>[_<attemptId>]`` of ``events_<N>_<appId>[.<codec>]``
  files (read in N order, from the last ``.compact`` file on, as Spark does) and an
  ``appstatus_<appId>[.inprogress]`` marker saying whether the application still runs.

The codec is the name's last extension (less ``.inprogress``), Spark's own rule: ``.zstd``, ``.lz4``,
``.snappy``, ``.lzf``; no extension is a plain log. Each codec is decoded in Spark's own framing
(docs/TRACES.md): zstd frames; lz4-java's LZ4BlockOutputStream blocks; snappy-java's
SnappyOutputStream (its header, then length-prefixed raw snappy blocks); compress-lzf's ``ZV`` chunks.
Lines come out in batches, never the whole log in memory.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

IN_PROGRESS = ".inprogress"
ROLLING_PREFIX = "eventlog_v2_"
EVENTS_PREFIX = "events_"
APPSTATUS_PREFIX = "appstatus_"
COMPACT = ".compact"
READ_BYTES = 1 << 24          # decompressed bytes handed on at a time: each statement per batch has a fixed cost
ZSTD_READ = 1 << 12           # compressed bytes per step: event logs compress about 40:1, so about 160 KB out

LZ4_MAGIC = b"LZ4Block"       # lz4-java LZ4BlockOutputStream
LZ4_RAW, LZ4_COMPRESSED = 0x10, 0x20
SNAPPY_MAGIC = b"\x82SNAPPY\x00"   # snappy-java SnappyOutputStream: magic, then version and compatible version
LZF_MAGIC = b"ZV"                  # compress-lzf chunk: 'Z' 'V' type, lengths, data


class CodecError(ValueError):
    """A compressed log does not decode (names the file and the byte offset)."""


@dataclass(frozen=True)
class EventLog:
    """One application attempt's log: a file, or a rolling folder and its event files in order."""
    path: Path                      # the file, or the rolling folder
    files: tuple[Path, ...]         # the files holding its events, in reading order
    codec: str                      # "" (plain), "zstd", "lz4", "snappy", "lzf"
    in_progress: bool               # still being written (.inprogress, or the rolling appstatus says so)
    rolling: bool


@dataclass(frozen=True)
class NotALog:
    """A file of the directory that is not read, and why (a counted skip, never silent)."""
    path: Path
    reason: str


@dataclass
class Lines:
    """A batch of consecutive lines of one file, as an Arrow string array (the newline left out):
    ``first`` is the line number of its first line (from 1); ``unterminated`` says its last line is
    the file's last and no newline ends it."""
    file: Path
    first: int
    text: pa.Array
    unterminated: bool = False

    def __len__(self) -> int:
        return len(self.text)


def codec_of(name: str) -> str:
    """Spark's rule (EventLogFileWriter.codecName): the last extension of the name less .inprogress
    ('' for none). The application id holds no '.', so any extension is the codec's short name."""
    name = name.removesuffix(IN_PROGRESS).removesuffix(COMPACT)
    return name.rsplit(".", 1)[1] if "." in name else ""


def _unknown_codec(codec: str) -> str:
    return (f"not an event log: its extension {codec!r} is no compression codec Spark writes "
            f"({', '.join(sorted(c for c in DECODERS if c))} or none)")


def discover(log_dir: Path) -> tuple[list[EventLog], list[NotALog]]:
    """The event logs under ``log_dir`` (single files and rolling folders, sorted by name) and the
    entries that are not read, each with its reason. Hidden entries (Spark's .crc files, ours)
    are not the applications'."""
    log_dir = Path(log_dir)
    if not log_dir.is_dir():
        what = "is a file, not a directory" if log_dir.exists() else "does not exist"
        raise FileNotFoundError(f"Spark event log directory {log_dir} {what} (NURD_TRACE_URL)")
    logs, skipped = [], []
    for entry in sorted(log_dir.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if entry.name.startswith(ROLLING_PREFIX):
                found = _rolling(entry)
                (logs if isinstance(found, EventLog) else skipped).append(found)
            else:
                skipped.append(NotALog(entry, f"a folder whose name does not start with {ROLLING_PREFIX} "
                                              f"(not a rolling event log)"))
            continue
        codec = codec_of(entry.name)
        if codec not in DECODERS:
            skipped.append(NotALog(entry, _unknown_codec(codec)))
            continue
        logs.append(EventLog(entry, (entry,), codec, entry.name.endswith(IN_PROGRESS), rolling=False))
    return logs, skipped


def application_of(log: EventLog) -> str:
    """The application attempt a log holds, by its name as Spark writes it (``<appId>[_<attempt>]``
    less the rolling prefix, the codec and .inprogress): a name per application across layouts."""
    name = log.path.name.removeprefix(ROLLING_PREFIX).removesuffix(IN_PROGRESS)
    return name.rsplit(".", 1)[0] if not log.rolling and "." in name else name


_EVENTS_FILE = re.compile(EVENTS_PREFIX + r"(\d+)_")


def _rolling(folder: Path) -> EventLog | NotALog:
    """A rolling log's event files in index order, from the last compacted one on (it holds what
    the earlier ones said); in progress while its appstatus marker ends in .inprogress."""
    files, status = [], []
    for f in folder.iterdir():
        m = _EVENTS_FILE.match(f.name)
        if m:
            files.append((int(m.group(1)), f))
        elif f.name.startswith(APPSTATUS_PREFIX):
            status.append(f)
    if not files:
        return NotALog(folder, f"a rolling event log folder with no {EVENTS_PREFIX}<N>_<appId> file")
    if not status:   # Spark's reader needs it too: it says whether the application still runs
        return NotALog(folder, f"a rolling event log folder with no {APPSTATUS_PREFIX}<appId> marker")
    files.sort()
    compacted = [i for i, (_, f) in enumerate(files) if f.name.removesuffix(IN_PROGRESS).endswith(COMPACT)]
    files = [f for _, f in files[compacted[-1] if compacted else 0:]]
    codecs = {codec_of(f.name) for f in files}
    if len(codecs) > 1:
        return NotALog(folder, f"event files of several codecs ({', '.join(sorted(codecs))}): one log has one codec")
    codec = codecs.pop()
    if codec not in DECODERS:
        return NotALog(files[0], _unknown_codec(codec))
    in_progress = any(s.name.endswith(IN_PROGRESS) for s in status)
    return EventLog(folder, tuple(files), codec, in_progress, rolling=True)


def read_lines(path: Path, codec: str, batch_bytes: int = READ_BYTES) -> Iterator[Lines]:
    """The lines of one file, decompressed as a stream, in batches of about ``batch_bytes`` (split
    by Arrow, not line by line in Python): memory holds a batch, never the file. A stream that
    stops decoding (CodecError) first gives the lines decoded before it."""
    line_no = 1
    pending: list[bytes] = []
    size = 0
    with open(path, "rb") as raw:
        try:
            for chunk in DECODERS[codec](raw, path, batch_bytes):
                pending.append(chunk)
                size += len(chunk)
                if size < batch_bytes:
                    continue
                data = b"".join(pending)
                cut = data.rfind(b"\n")
                if cut < 0:   # one line longer than a batch: it grows until its newline comes
                    pending = [data]
                    continue
                text = _split(data[:cut])
                yield Lines(path, line_no, text)
                line_no += len(text)
                pending = [data[cut + 1:]]
                size = len(pending[0])
        except CodecError:
            yield from _last_lines(path, line_no, pending)
            raise
    yield from _last_lines(path, line_no, pending)


def _last_lines(path: Path, line_no: int, pending: list[bytes]) -> Iterator[Lines]:
    """What is left at the end of a file, or where its stream stopped decoding: the whole lines,
    then a last line no newline ends (cut), if any."""
    data = b"".join(pending)
    cut = data.rfind(b"\n")
    if cut >= 0:
        text = _split(data[:cut])
        yield Lines(path, line_no, text)
        line_no += len(text)
    if data[cut + 1:]:
        yield Lines(path, line_no, _split(data[cut + 1:]), unterminated=True)


def _split(data: bytes) -> pa.Array:
    """Whole lines (no trailing newline) as an Arrow string array; bytes that are not UTF-8 are
    replaced (such a line is not JSON either, and is reported so)."""
    try:
        whole = pa.array([data], pa.large_string())
    except pa.ArrowInvalid:
        whole = pa.array([data.decode("utf-8", "replace")], pa.large_string())
    return pc.list_flatten(pc.split_pattern(whole, "\n"))


# --- the codecs, in Spark's framings ------------------------------------------------------------

def _plain(raw: BinaryIO, path: Path, size: int) -> Iterator[bytes]:
    while chunk := raw.read(size):
        yield chunk


def _zstd(raw: BinaryIO, path: Path, size: int) -> Iterator[bytes]:
    """zstd-jni's ZstdOutputStream writes standard zstd frames (one or more, concatenated). Each
    frame must end: a file cut short would otherwise decode without complaint up to the cut."""
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    obj, in_frame = dctx.decompressobj(), False
    data = raw.read(ZSTD_READ)
    while data:
        try:
            out = obj.decompress(data)
        except zstandard.ZstdError as e:
            raise CodecError(f"{path}: not a zstd stream Spark wrote ({e}) near byte {raw.tell()}") from None
        if out:
            yield out
        if obj.eof:   # a frame ended: what follows is the next frame
            data, obj, in_frame = obj.unused_data or raw.read(ZSTD_READ), dctx.decompressobj(), False
        else:
            data, in_frame = raw.read(ZSTD_READ), True
    if in_frame:
        raise CodecError(f"{path}: the zstd stream ends mid-frame at byte {raw.tell()} (the file is truncated)")


def _read_exact(raw: BinaryIO, n: int, path: Path, what: str) -> bytes:
    data = raw.read(n)
    if len(data) != n:
        raise CodecError(f"{path}: the {what} ends early at byte {raw.tell()} (the file is truncated)")
    return data


def _lz4(raw: BinaryIO, path: Path, size: int) -> Iterator[bytes]:
    """lz4-java LZ4BlockOutputStream: per block the magic 'LZ4Block', a token (method 0x10 raw or
    0x20 lz4, low 4 bits the level), compressed length, original length and a checksum (int32
    little-endian each), then the data; an empty block ends a stream, and streams may follow."""
    import lz4.block

    while header := raw.read(21):
        if len(header) < 21 or header[:8] != LZ4_MAGIC:
            raise CodecError(f"{path}: not an lz4-java block at byte {raw.tell() - len(header)} "
                             f"(expected {LZ4_MAGIC!r}; Spark's lz4 is LZ4BlockOutputStream, not the lz4 frame format)")
        method = header[8] & 0xF0
        compressed, original, _checksum = struct.unpack("<iii", header[9:21])
        data = _read_exact(raw, compressed, path, "lz4 block")
        if method == LZ4_RAW:
            yield data
        elif method == LZ4_COMPRESSED:
            try:
                yield lz4.block.decompress(data, uncompressed_size=original)
            except lz4.block.LZ4BlockError as e:
                raise CodecError(f"{path}: an lz4 block does not decode ({e}) at byte {raw.tell() - compressed}") from None
        else:
            raise CodecError(f"{path}: unknown lz4-java block method {method:#x} at byte {raw.tell() - compressed - 21}")


def _snappy(raw: BinaryIO, path: Path, size: int) -> Iterator[bytes]:
    """snappy-java SnappyOutputStream: the 8-byte magic and two int32 big-endian versions, then
    blocks of an int32 big-endian length and raw snappy data (concatenated streams repeat the header)."""
    import cramjam

    header = raw.read(16)
    if header[:8] != SNAPPY_MAGIC:
        raise CodecError(f"{path}: no snappy-java header at byte 0 (expected {SNAPPY_MAGIC!r}; Spark's snappy is "
                         f"SnappyOutputStream, not the snappy framing format)")
    while head := raw.read(4):
        if len(head) < 4:
            head += _read_exact(raw, 4 - len(head), path, "snappy block length")
        if head == SNAPPY_MAGIC[:4]:   # a concatenated stream's header (a length is never negative)
            _read_exact(raw, 12, path, "snappy-java header")
            continue
        (n,) = struct.unpack(">i", head)
        block = _read_exact(raw, n, path, "snappy block")
        try:
            yield bytes(cramjam.snappy.decompress_raw(block))
        except cramjam.DecompressionError as e:
            raise CodecError(f"{path}: a snappy block does not decode ({e}) at byte {raw.tell() - n}") from None


def _lzf(raw: BinaryIO, path: Path, size: int) -> Iterator[bytes]:
    """compress-lzf LZFOutputStream chunks: 'Z' 'V', a type byte (0 stored, 1 compressed), an
    int16 big-endian length, for compressed chunks the original int16 length too, then the data."""
    import lzf

    while head := raw.read(5):
        if len(head) < 5 or head[:2] != LZF_MAGIC:
            raise CodecError(f"{path}: not an LZF chunk at byte {raw.tell() - len(head)} (expected 'ZV')")
        kind, n = head[2], struct.unpack(">H", head[3:5])[0]
        if kind == 0:
            yield _read_exact(raw, n, path, "lzf chunk")
        elif kind == 1:
            (original,) = struct.unpack(">H", _read_exact(raw, 2, path, "lzf chunk header"))
            try:
                out = lzf.decompress(_read_exact(raw, n, path, "lzf chunk"), original)
            except ValueError:
                out = None
            if out is None or len(out) != original:
                raise CodecError(f"{path}: an LZF chunk does not decode to its {original} bytes at byte {raw.tell() - n}")
            yield out
        else:
            raise CodecError(f"{path}: unknown LZF chunk type {kind} at byte {raw.tell() - 5}")


#: codec -> (file, its path, decompressed bytes per step) -> the decompressed bytes, in order
DECODERS: dict[str, Callable[[BinaryIO, Path, int], Iterator[bytes]]] = {
    "": _plain, "zstd": _zstd, "lz4": _lz4, "snappy": _snappy, "lzf": _lzf}
