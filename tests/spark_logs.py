"""Hand-made Spark event logs for the format tests: an application's listener events as Spark 3
writes them (the fields the staging reads, with Spark's names), and each codec's framing as Spark
writes it (see stragglers/traces/spark_eventlog.py and docs/TRACES.md):

- zstd: standard zstd frames (here two, as a flushed stream may have);
- lz4: lz4-java LZ4BlockOutputStream: 'LZ4Block', token, int32 LE compressed / original length and
  checksum per block, an empty raw block at the end (the checksum is written as 0: the reader, like
  Spark's default, does not check it);
- snappy: snappy-java SnappyOutputStream: magic '\\x82SNAPPY\\x00', int32 BE version 1 and compatible
  version 1, then int32 BE length + raw snappy per block;
- lzf: compress-lzf chunks 'ZV', type 1 (compressed: int16 BE lengths) or 0 (stored).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

T0 = 1_700_000_000_000   # ms since the epoch


def application(app_id: str = "app-20240101000000-0000", *, tasks: int = 12, small_tasks: int = 3,
                end: bool = True, name: str = "made by hand") -> list[dict]:
    """An application of two executors on two hosts: stage 0 of ``tasks`` tasks (task 1 fails once
    and is re-run; task 2 has a speculative copy that wins, its original killed), stage 1 of
    ``small_tasks`` tasks, and stage 2 left running when ``end`` is False."""
    ev: list[dict] = [
        {"Event": "SparkListenerLogStart", "Spark Version": "3.5.1"},
        {"Event": "SparkListenerApplicationStart", "App Name": name, "App ID": app_id, "Timestamp": T0,
         "User": "op"},
        {"Event": "SparkListenerEnvironmentUpdate", "JVM Information": {},
         "Spark Properties": {"spark.speculation": "true", "spark.speculation.quantile": "0.75"}},
        _executor_added("1", "host-a", 2, T0 + 100), _executor_added("2", "host-b", 2, T0 + 150),
    ]
    task_id = 0

    def stage(stage_id: int, n: int, start: int, finish: bool = True) -> None:
        nonlocal task_id
        ev.append({"Event": "SparkListenerStageSubmitted", "Stage Info": _stage(stage_id, n, start)})
        for index in range(n):
            lives = [(0, False, "success")]
            if stage_id == 0 and index == 1:
                lives = [(0, False, "failed"), (1, False, "success")]
            if stage_id == 0 and index == 2:
                lives = [(0, False, "killed"), (1, True, "success")]
            for attempt, speculative, outcome in lives:
                host, executor = ("host-a", "1") if (index + attempt) % 2 == 0 else ("host-b", "2")
                launch = start + 10 * index + 500 * attempt
                info = _task_info(task_id, index, attempt, launch, executor, host, speculative)
                ev.append({"Event": "SparkListenerTaskStart", "Stage ID": stage_id, "Stage Attempt ID": 0,
                           "Task Info": info})
                if finish:
                    ev.append(_task_end(stage_id, info, launch + 1000 + 7 * index, outcome))
                task_id += 1
        if finish:
            ev.append({"Event": "SparkListenerStageCompleted",
                       "Stage Info": _stage(stage_id, n, start) | {"Completion Time": start + 5000}})

    stage(0, tasks, T0 + 1000)
    stage(1, small_tasks, T0 + 10_000)
    ev.append({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", "executionId": 0,
               "description": "ignored by the staging", "sparkPlanInfo": {"nodeName": "x", "children": []}})
    if end:
        ev.append({"Event": "SparkListenerExecutorRemoved", "Timestamp": T0 + 20_000, "Executor ID": "2",
                   "Removed Reason": "decommissioned"})
        ev.append({"Event": "SparkListenerApplicationEnd", "Timestamp": T0 + 30_000})
    else:
        stage(2, 2, T0 + 20_000, finish=False)
    return ev


def _executor_added(executor: str, host: str, cores: int, at: int) -> dict:
    return {"Event": "SparkListenerExecutorAdded", "Timestamp": at, "Executor ID": executor,
            "Executor Info": {"Host": host, "Total Cores": cores, "Log Urls": {}}}


def _stage(stage_id: int, n: int, submitted: int) -> dict:
    return {"Stage ID": stage_id, "Stage Attempt ID": 0, "Stage Name": f"stage {stage_id}", "Number of Tasks": n,
            "RDD Info": [], "Parent IDs": [], "Details": "", "Submission Time": submitted, "Accumulables": []}


def _task_info(task_id, index, attempt, launch, executor, host, speculative) -> dict:
    return {"Task ID": task_id, "Index": index, "Attempt": attempt, "Partition ID": index, "Launch Time": launch,
            "Executor ID": executor, "Host": host, "Locality": "NODE_LOCAL", "Speculative": speculative,
            "Getting Result Time": 0, "Finish Time": 0, "Failed": False, "Killed": False, "Accumulables": []}


def _task_end(stage_id: int, info: dict, finish: int, outcome: str) -> dict:
    reason = {"success": {"Reason": "Success"},
              "failed": {"Reason": "ExceptionFailure", "Class Name": "java.io.IOException",
                         "Description": "disk gone", "Stack Trace": [], "Accumulator Updates": []},
              "killed": {"Reason": "TaskKilled", "Kill Reason": "another attempt succeeded",
                         "Accumulator Updates": []}}[outcome]
    run = finish - info["Launch Time"] - 20
    metrics = {"Executor Deserialize Time": 5, "Executor Deserialize CPU Time": 4_000_000, "Executor Run Time": run,
               "Executor CPU Time": run * 900_000, "Peak Execution Memory": 0, "Result Size": 1500, "JVM GC Time": 3,
               "Result Serialization Time": 0, "Memory Bytes Spilled": 0, "Disk Bytes Spilled": 0,
               "Shuffle Read Metrics": {"Remote Blocks Fetched": 1, "Local Blocks Fetched": 1, "Fetch Wait Time": 2,
                                        "Remote Bytes Read": 100, "Remote Bytes Read To Disk": 0,
                                        "Local Bytes Read": 50, "Total Records Read": 10},
               "Shuffle Write Metrics": {"Shuffle Bytes Written": 70, "Shuffle Write Time": 1000,
                                         "Shuffle Records Written": 7},
               "Input Metrics": {"Bytes Read": 1000 + info["Index"], "Records Read": 100},
               "Output Metrics": {"Bytes Written": 0, "Records Written": 0}, "Updated Blocks": []}
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage_id, "Stage Attempt ID": 0,
            "Task Type": "ResultTask", "Task End Reason": reason,
            "Task Info": info | {"Finish Time": finish, "Failed": outcome == "failed",
                                 "Killed": outcome == "killed"},
            "Task Executor Metrics": {}, "Task Metrics": metrics}


def lines(events: list[dict]) -> bytes:
    """The log's bytes as Spark writes them: one compact JSON object a line, each line ended."""
    return b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in events)


def compress(data: bytes, codec: str) -> bytes:
    """``data`` in the framing Spark's codec ``codec`` writes ('' = plain)."""
    return {"": lambda d: d, "zstd": _zstd, "lz4": _lz4, "snappy": _snappy, "lzf": _lzf}[codec](data)


def _zstd(data: bytes) -> bytes:
    import zstandard

    half = len(data) // 2
    c = zstandard.ZstdCompressor()
    return c.compress(data[:half]) + c.compress(data[half:])


def _lz4(data: bytes, block: int = 32 * 1024) -> bytes:
    import lz4.block

    out = []
    for i in range(0, len(data), block):
        raw = data[i:i + block]
        packed = lz4.block.compress(raw, store_size=False)
        out.append(b"LZ4Block" + bytes([0x20 | 4]) + struct.pack("<iii", len(packed), len(raw), 0) + packed)
    out.append(b"LZ4Block" + bytes([0x10]) + struct.pack("<iii", 0, 0, 0))
    return b"".join(out)


def _snappy(data: bytes, block: int = 32 * 1024) -> bytes:
    import cramjam

    out = [b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)]
    for i in range(0, len(data), block):
        packed = bytes(cramjam.snappy.compress_raw(data[i:i + block]))
        out.append(struct.pack(">i", len(packed)) + packed)
    return b"".join(out)


def _lzf(data: bytes, block: int = 0xFFFF) -> bytes:
    import lzf

    out = []
    for i in range(0, len(data), block):
        raw = data[i:i + block]
        packed = lzf.compress(raw)
        if packed is None or len(packed) >= len(raw):
            out.append(b"ZV\x00" + struct.pack(">H", len(raw)) + raw)
        else:
            out.append(b"ZV\x01" + struct.pack(">HH", len(packed), len(raw)) + packed)
    return b"".join(out)


def write(path: Path, events: list[dict] | bytes, codec: str = "") -> Path:
    """Write a log (events, or a log's bytes as they are) at ``path`` in ``codec``'s framing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(compress(events if isinstance(events, bytes) else lines(events), codec))
    return path
