"""Hand-built mini traces in the exact Google clusterdata-2011-2 file format.

Tests describe jobs and tasks event by event; ``write`` lays them out as
``<table>/part-NNNNN-of-MMMMM.csv.gz`` time slices, like the real bucket.
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass, field
from pathlib import Path

from stragglers.traces.synth.formats import mark_empty_parts_on_purpose

S = 1_000_000          # microseconds per second
T0 = 600 * S           # the trace window starts at 600 s
END = 2**63 - 1
SUBMIT, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST, UPDATE_PENDING, UPDATE_RUNNING = range(9)
BIG_MACHINE = 4_155_527_081  # above 2^31, like the real trace


@dataclass
class MiniTrace:
    job_events: list[list] = field(default_factory=list)
    task_events: list[list] = field(default_factory=list)
    task_usage: list[list] = field(default_factory=list)
    machine_events: list[list] = field(default_factory=list)   # written only when not empty

    def job(self, job_id: int, sched_class: int = 1, time: int = T0, event: int = SUBMIT,
            logical: str = "bG9naWNhbA==") -> None:
        self.job_events.append([time, "", job_id, event, "dXNlcg==", sched_class, "am9i", logical])

    def event(self, job_id: int, task: int, time: int, event: int, machine: int | str = BIG_MACHINE,
              priority: int = 9, sched_class: int = 1, missing: str = "", cpu_request: float = 0.0625,
              memory_request: float = 0.0318) -> None:
        self.task_events.append([time, missing, job_id, task, machine if event != SUBMIT else "", event,
                                 "dXNlcg==", sched_class, priority, cpu_request, memory_request, "", 0])

    def machine(self, machine_id: int, time: int, cpus: float, memory: float, platform: str = "cGxhdGZvcm0=",
                event: int = 0) -> None:
        """A machine_events row: 0 ADD, 1 REMOVE, 2 UPDATE."""
        self.machine_events.append([time, machine_id, event, platform, cpus, memory])

    def usage(self, job_id: int, task: int, start: int, end: int, machine: int = BIG_MACHINE,
              cpu: float | str = 0.05, mem: float | str = 0.06, **fields) -> None:
        row = {"cpu_rate": cpu, "canonical_memory": mem, "assigned_memory": mem * 1.1 if mem != "" else "",
               "unmapped_page_cache": 0.001, "total_page_cache": 0.0015, "maximum_memory": mem,
               "disk_io_time": 2.861e-06, "local_disk_space": 0.0001869, "maximum_cpu_rate": cpu,
               "maximum_disk_io_time": 0.0003567, "cpi": 2.445, "mai": 0.007243} | fields
        self.task_usage.append([start, end, job_id, task, machine, *row.values(), 0, 1, ""])

    def run(self, job_id: int, task: int, start: int, end: int, *, ending: int = FINISH,
            machine: int = BIG_MACHINE, cpu: float = 0.05, mem: float = 0.06, priority: int = 9,
            usage: bool = True, submit: bool = True, window: int = 300 * S, **fields) -> None:
        """SUBMIT + SCHEDULE at ``start``, ``ending`` at ``end``, 300 s usage windows between."""
        if submit:
            self.event(job_id, task, start, SUBMIT, priority=priority)
        self.event(job_id, task, start, SCHEDULE, machine, priority=priority)
        self.event(job_id, task, end, ending, machine, priority=priority)
        if usage:
            w = start
            while w < end:
                w_end = min(end, (w // window + 1) * window)
                self.usage(job_id, task, w, w_end, machine, cpu, mem, **fields)
                w = w_end

    def write(self, root: Path, n_parts: int = 1, slice_us: int | None = None) -> Path:
        """Write gzip parts; rows go to part floor((time - T0) / slice) like real time slices."""
        root = Path(root)
        tables = {"job_events": (self.job_events, 0), "task_events": (self.task_events, 0),
                  "task_usage": (self.task_usage, 0)}
        if self.machine_events:   # one part, like the real table
            rows = sorted(self.machine_events, key=lambda r: (r[0], r[1]))
            (root / "machine_events").mkdir(parents=True, exist_ok=True)
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows(rows)
            (root / "machine_events" / "part-00000-of-00001.csv.gz").write_bytes(gzip.compress(buf.getvalue().encode(), mtime=0))
        times = [r[0] for rows, _ in tables.values() for r in rows if 0 < r[0] < END]
        span = (max(times) - T0 + 1) if times else 1
        slice_us = slice_us or -(-span // n_parts)
        for name, (rows, col) in tables.items():
            (root / name).mkdir(parents=True, exist_ok=True)
            parts: list[list] = [[] for _ in range(n_parts)]
            for r in sorted(rows, key=lambda r: (r[col], r[2])):
                t = r[col]
                p = 0 if t <= T0 else n_parts - 1 if t >= END else min(n_parts - 1, (t - T0) // slice_us)
                parts[p].append(r)
            for i, prow in enumerate(parts):
                buf = io.StringIO()
                csv.writer(buf, lineterminator="\n").writerows(prow)
                path = root / name / f"part-{i:05d}-of-{n_parts:05d}.csv.gz"
                path.write_bytes(gzip.compress(buf.getvalue().encode(), mtime=0))
        mark_empty_parts_on_purpose(root)   # a slice without rows gives a part without rows, as in the generator
        return root
