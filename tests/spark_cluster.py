"""A real Spark standalone cluster on loopback, and the event logs of speculative applications run on it.

The cluster is a master on 127.0.0.1 and one one-core worker on each of 127.0.0.2 and 127.0.0.3, every
daemon JVM started here directly (no launcher JVM), bound to its own loopback address through SPARK_LOCAL_IP,
on ports picked free at run time, with its work, local and log directories in a temporary folder. Each
process leads its own process group, so stopping kills the group: a worker's executors die with it.

The applications (``VARIANTS``, run by ``tests/spark_apps.py`` in one driver process) slow one chosen
partition per stage on its first attempt, so that Spark's speculation copies it onto the other host.
Together they write each kind of event log Spark 4 writes: plain and compressed with each codec
(zstd, lz4, snappy, lzf), single-file and rolling, complete and in progress (a killed driver's).

    with standalone_cluster(root) as cluster: ...           # cluster.master_url
    generate(out_dir)                                         # cluster + every variant -> Generated
    python -m tests.spark_cluster --out DIR                   # the same from the command line

``read_events`` (the project's reader, stragglers.traces.spark_eventlog) and ``speculative_copies``
give the harness's own checks and the ground truth of which tasks Spark copied, when and where.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parent.parent

MASTER_HOST = "127.0.0.1"
WORKER_HOSTS = ("127.0.0.2", "127.0.0.3")
JAVA_INSTALL = "apt-get install openjdk-17-jre-headless"
# Spark refuses a smaller spark.eventLog.rolling.maxFileSize
ROLLING_MAX_FILE_SIZE = 10 * 2**20

# Speculation as the applications run it. The efficiency check (on by default since 3.4) is off: it
# reads running tasks' progress from heartbeats, which the event log does not keep, so a replay from
# the log could not reproduce its choices.
SPECULATION = {
    "spark.speculation": "true",
    "spark.speculation.interval": "100ms",
    "spark.speculation.quantile": "0.5",
    "spark.speculation.multiplier": "1.5",
    "spark.speculation.minTaskRuntime": "500ms",
    "spark.speculation.efficiency.enabled": "false",
}
PARTITIONS = 8
# Seconds the slowed partition's first attempt sleeps: far past the speculation threshold and past
# the copy's end on a loaded machine, at no cost to the run, since the stage ends when the copy
# succeeds and Spark kills the original then.
SLOW_SECONDS = 20.0
# One stage slows its last partition (copied as soon as a slot frees), the other an early one (its
# copy waits for the pending tasks, which Spark schedules first).
SLOWED_PARTITIONS = (PARTITIONS - 1, 1)

# Short-lived JVMs: C1 only and the serial collector start fastest
JVM_OPTS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


@dataclass(frozen=True)
class Variant:
    """One application: the kind of event log it writes. A killed one's driver dies (SIGKILL) after
    its first stage, leaving its log in progress, in a folder of its own (``INPROGRESS_DIR``)."""
    name: str
    codec: str | None          # None: spark.eventLog.compress=false
    rolling: bool
    killed: bool = False

    def settings(self) -> dict[str, str]:
        conf = {
            "spark.eventLog.compress": "true" if self.codec else "false",
            "spark.eventLog.rolling.enabled": "true" if self.rolling else "false",
        }
        if self.codec:
            conf["spark.eventLog.compression.codec"] = self.codec
        if self.rolling:
            conf["spark.eventLog.rolling.maxFileSize"] = str(ROLLING_MAX_FILE_SIZE)
        return conf


VARIANTS = (
    Variant("plain", None, False),
    Variant("zstd_rolling", "zstd", True),   # Spark 4's defaults: rolling, zstd
    Variant("lz4", "lz4", False),
    Variant("snappy", "snappy", False),
    Variant("lzf", "lzf", False),
    Variant("zstd_inprogress", "zstd", False, killed=True),   # last: its driver dies with it
)
EVENTLOG_DIR, INPROGRESS_DIR = "eventlogs", "eventlogs_inprogress"
CODECS = ("zstd", "lz4", "snappy", "lzf")


# ---------------------------------------------------------------------------------------------------
# Java and Spark's location

def java_missing_reason() -> str | None:
    """None where a Java 17+ runtime is on PATH, else one line saying what to install."""
    java = shutil.which("java")
    if java is None:
        return f"java not found on PATH: the Spark cluster tests need Java 17+ ({JAVA_INSTALL})"
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    found = re.search(r'version "(\d+)', out)
    if not found or int(found.group(1)) < 17:
        return f"Spark 4 needs Java 17+, {java} is {out.splitlines()[0] if out else 'unknown'} ({JAVA_INSTALL})"
    return None


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------------
# The cluster

@dataclass
class SparkCluster:
    master_url: str
    root: Path
    processes: dict[str, subprocess.Popen]
    start_seconds: float

    def log_of(self, name: str) -> Path:
        return self.root / "logs" / f"{name}.log"

    def stop(self) -> None:
        """Kills every process group started (the master, the workers and their executors)."""
        for proc in self.processes.values():
            _kill_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in self.processes.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _kill_group(proc, signal.SIGKILL)   # executors that outlived their worker, if any
            proc.wait()


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _die_with_parent() -> None:
    """In the child before exec: the kernel kills it if the process that started it dies (a test
    run killed outright leaves no JVM; executors exit on their own once their worker is gone)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # 1: PR_SET_PDEATHSIG


def _popen(cmd: list[str], log: Path, env: dict[str, str], cwd: Path) -> subprocess.Popen:
    """A process of its own group (stopping kills the group), its output in ``log``."""
    with open(log, "wb") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                cwd=cwd, start_new_session=True, preexec_fn=_die_with_parent)


def _daemon_env(root: Path, host: str) -> dict[str, str]:
    env = dict(os.environ)
    # SPARK_SCALA_VERSION is what spark-class would have set: a worker builds its executors' command
    # with it
    env.update(SPARK_HOME=str(spark_home()), SPARK_SCALA_VERSION="2.13", SPARK_LOCAL_IP=host, SPARK_LOCAL_HOSTNAME=host,
               SPARK_LOCAL_DIRS=str(root / "local"), SPARK_LOG_DIR=str(root / "logs"),
               SPARK_CONF_DIR=str(root / "conf"), SPARK_WORKER_DIR=str(root / "work"))
    return env


def _start(root: Path, name: str, host: str, main_class: str, args: list[str],
           env: dict[str, str] | None = None) -> subprocess.Popen:
    cmd = ["java", "-cp", f"{spark_home() / 'jars'}/*", "-Xmx256m", *JVM_OPTS, main_class, *args]
    return _popen(cmd, root / "logs" / f"{name}.log", _daemon_env(root, host) | (env or {}), root)


def _wait_for(cluster: SparkCluster, name: str, pattern: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    log = cluster.log_of(name)
    while time.monotonic() < deadline:
        if pattern in log.read_text(errors="replace"):
            return
        if cluster.processes[name].poll() is not None:
            break
        time.sleep(0.1)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    raise RuntimeError(f"spark {name} did not report {pattern!r} within {timeout:.0f} s ({log}):\n{tail}")


@contextlib.contextmanager
def standalone_cluster(root: Path, worker_hosts: tuple[str, ...] = WORKER_HOSTS,
                       timeout: float = 120, worker_cores: int = 1,
                       worker_env: dict[str, dict[str, str]] | None = None) -> Iterator[SparkCluster]:
    """A master on 127.0.0.1 and a worker of ``worker_cores`` cores per host in ``worker_hosts``, with
    ``worker_env[host]`` added to that worker's environment (its executors, and their Python workers,
    inherit it); every process killed on leaving, whatever happened inside."""
    root = Path(root)
    for sub in ("logs", "local", "conf", "work"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    port = free_port(MASTER_HOST)
    master_url = f"spark://{MASTER_HOST}:{port}"
    cluster = SparkCluster(master_url, root, {}, 0.0)
    try:
        cluster.processes["master"] = _start(
            root, "master", MASTER_HOST, "org.apache.spark.deploy.master.Master",
            ["--host", MASTER_HOST, "--port", str(port), "--webui-port", str(free_port(MASTER_HOST))])
        # A worker that finds no master retries only after 5 to 15 s: start the workers once it is up
        _wait_for(cluster, "master", "New state: ALIVE", timeout)
        for i, host in enumerate(worker_hosts, 1):
            cluster.processes[f"worker{i}"] = _start(
                root, f"worker{i}", host, "org.apache.spark.deploy.worker.Worker",
                ["--host", host, "--port", str(free_port(host)), "--webui-port", str(free_port(host)),
                 "--cores", str(worker_cores), "--memory", "1g", "--work-dir", str(root / "work"), master_url],
                (worker_env or {}).get(host))
        for i in range(1, len(worker_hosts) + 1):
            _wait_for(cluster, f"worker{i}", "Successfully registered with master", timeout)
        cluster.start_seconds = time.monotonic() - started
        yield cluster
    finally:
        cluster.stop()


def listening_addresses(pid: int) -> set[str]:
    """The addresses a process listens on (TCP, IPv4 or IPv6), from /proc: its socket inodes matched
    with the kernel's socket tables."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:   # 0A: LISTEN
                continue
            raw = bytes.fromhex(fields[1].split(":")[0])
            # the kernel prints each 32-bit word of the address in host (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            address = ipaddress.ip_address(raw)
            found.add(str(getattr(address, "ipv4_mapped", None) or address))
    return found


def processes_under(root: Path) -> list[int]:
    """Processes whose working directory is inside ``root``: the daemons (in it) and their executors
    (in its work/ folder)."""
    root = Path(root).resolve()
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if Path(os.readlink(proc / "cwd")).is_relative_to(root):
                    found.append(int(proc.name))
    return found


# ---------------------------------------------------------------------------------------------------
# The applications

def driver_settings(cluster: SparkCluster, out: Path, variant: Variant) -> dict[str, str]:
    """Every setting of one application: loopback only, no UI, one one-core executor per worker and
    the job held until both registered, speculation, and the variant's event log."""
    return {
        "spark.master": cluster.master_url,
        "spark.app.name": f"nurd-speculation-{variant.name}",
        "spark.driver.host": MASTER_HOST,
        "spark.driver.bindAddress": MASTER_HOST,
        "spark.ui.enabled": "false",
        "spark.driver.memory": "512m",
        "spark.executor.memory": "512m",
        "spark.executor.cores": "1",
        "spark.cores.max": str(len(WORKER_HOSTS)),
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        "spark.driver.extraJavaOptions": " ".join(JVM_OPTS),
        "spark.executor.extraJavaOptions": " ".join(JVM_OPTS),
        # a killed attempt's Python worker goes at once (default 2 s), freeing its slot for the next stage
        "spark.python.task.killTimeout": "100ms",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": (out / (INPROGRESS_DIR if variant.killed else EVENTLOG_DIR)).resolve().as_uri(),
        **SPECULATION,
        **variant.settings(),
    }


@dataclass
class Generated:
    """Logs written by ``generate``: ``eventlog_dir`` as spark.eventLog.dir has it (the complete
    logs), and one entry per application in ``apps`` (variant, settings, app id, log path relative
    to ``root``, seconds, speculative copies)."""
    root: Path
    eventlog_dir: Path
    cluster_start_seconds: float
    apps: list[dict]

    def app(self, variant: str) -> dict:
        return next(a for a in self.apps if a["variant"] == variant)

    def log_path(self, variant: str) -> Path:
        return self.root / self.app(variant)["log"]

    def copies(self, inprogress: bool = False) -> list[SpeculativeCopy]:
        """Spark's own speculative copies in the logs of ``eventlog_dir`` (and of the in-progress
        log too with ``inprogress``): the ground truth for a replay of those logs."""
        return [SpeculativeCopy(**c) for app in self.apps if inprogress or not app["killed"]
                for c in app["speculative_copies"]]

    @classmethod
    def load(cls, root: Path) -> "Generated":
        manifest = json.loads((Path(root) / "manifest.json").read_text())
        return cls(Path(root), Path(root) / EVENTLOG_DIR, manifest["cluster_start_seconds"], manifest["apps"])


def generate(out: Path, variants: tuple[Variant, ...] = VARIANTS) -> Generated:
    """Starts a cluster under a temporary folder, runs one application per variant (in one driver
    process, so the driver JVM starts once), stops the cluster, and writes ``out/eventlogs/``,
    ``out/eventlogs_inprogress/`` and ``out/manifest.json`` (the settings and Spark's own
    speculative copies of each application)."""
    out = Path(out)
    for sub in (EVENTLOG_DIR, INPROGRESS_DIR):
        (out / sub).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="nurd-spark-") as tmp:
        try:
            ran, start_seconds = _run_plan(Path(tmp), out, variants)
        finally:
            # the daemons', driver's and executors' own logs, kept for a diagnosis
            for sub in ("logs", "work"):
                shutil.copytree(Path(tmp) / sub, out / "cluster_logs" / sub, dirs_exist_ok=True)
    apps = []
    for variant, run in zip(variants, ran):
        log = _log_of(out / (INPROGRESS_DIR if variant.killed else EVENTLOG_DIR), run["app_id"])
        apps.append({"variant": variant.name, "codec": variant.codec, "rolling": variant.rolling,
                     "killed": variant.killed, "app_id": run["app_id"], "log": str(log.relative_to(out)),
                     "seconds": round(run["seconds"], 2),
                     "settings": SPECULATION | variant.settings(),
                     "slowed": run["slowed"],
                     "speculative_copies": [asdict(c) for c in speculative_copies(log)]})
    generated = Generated(out, out / EVENTLOG_DIR, round(start_seconds, 2), apps)
    (out / "manifest.json").write_text(json.dumps(
        {"spark_version": _spark_version(), "cluster_start_seconds": generated.cluster_start_seconds,
         "apps": apps}, indent=1) + "\n")
    return generated


def _run_plan(tmp: Path, out: Path, variants: tuple[Variant, ...]) -> tuple[list, float]:
    if any(v.killed for v in variants[:-1]):
        raise ValueError("only the last application can be killed: its driver dies with it")
    with standalone_cluster(tmp) as cluster:
        plan = [{"variant": v.name, "settings": driver_settings(cluster, out, v), "killed": v.killed,
                 "partitions": PARTITIONS, "slowed": list(SLOWED_PARTITIONS[:1] if v.killed else SLOWED_PARTITIONS),
                 "slow_seconds": SLOW_SECONDS, "padding_bytes": ROLLING_MAX_FILE_SIZE + 2**19 if v.rolling else 0}
                for v in variants]
        plan_file, result_file = tmp / "plan.json", tmp / "result.json"
        plan_file.write_text(json.dumps(plan))
        driver_log = tmp / "logs" / "driver.log"
        driver = _popen([sys.executable, "-m", "tests.spark_apps", str(plan_file), str(result_file)],
                        driver_log, _daemon_env(tmp, MASTER_HOST), REPO)
        cluster.processes["driver"] = driver   # killed with the cluster, whatever happens
        code = driver.wait(timeout=600)
        ran = json.loads(result_file.read_text()) if result_file.exists() else []
        if not (code == 0 or code == -signal.SIGKILL and len(ran) == len(plan) and plan[-1]["killed"]):
            tail = "\n".join(driver_log.read_text(errors="replace").splitlines()[-30:])
            raise RuntimeError(f"the Spark applications failed (exit {code}; the driver's, daemons' and "
                               f"executors' logs are kept in cluster_logs/ beside eventlogs/):\n{tail}")
        return ran, cluster.start_seconds


def _spark_version() -> str:
    import pyspark

    return pyspark.__version__


def _log_of(eventlog_dir: Path, app_id: str) -> Path:
    found = [p for p in eventlog_dir.iterdir() if app_id in p.name]
    if len(found) != 1:
        raise RuntimeError(f"{eventlog_dir}: expected one event log of {app_id}, found {[p.name for p in found]}")
    return found[0]


# ---------------------------------------------------------------------------------------------------
# Reading, for the harness's own checks and ground truth

_MAGIC = {b"\x28\xb5\x2f\xfd": "zstd", b"LZ4Block": "lz4", b"\x82SNAPPY\x00": "snappy", b"ZV": "lzf"}


def sniff_codec(path: Path) -> str | None:
    """The codec a file's first bytes show (None: a plain JSON line)."""
    head = Path(path).read_bytes()[:8]
    for magic, codec in _MAGIC.items():
        if head.startswith(magic):
            return codec
    return None


def event_files(log: Path) -> list[Path]:
    """A single-file log, or a rolling folder's events_N files in N order."""
    log = Path(log)
    if not log.is_dir():
        return [log]
    files = [p for p in log.iterdir() if p.name.startswith("events_")]
    return sorted(files, key=lambda p: int(p.name.split("_")[1]))


def read_events(log: Path) -> Iterator[dict]:
    """Every event of a log (a file or a rolling folder), read by the project's reader
    (stragglers.traces.spark_eventlog: the codec by the name, as Spark does; ``sniff_codec`` checks
    the bytes apart)."""
    from stragglers.traces.spark_eventlog import discover, read_lines

    log = Path(log).resolve()
    found = next((e for e in discover(log.parent)[0] if e.path.resolve() == log), None)
    if found is None:
        raise RuntimeError(f"{log}: not an event log the project's reader finds")
    for path in found.files:
        for batch in read_lines(path, found.codec):
            for line in batch.text.to_pylist():
                if line.strip():
                    yield json.loads(line)


@dataclass(frozen=True)
class SpeculativeCopy:
    """One task Spark copied, as its own log tells it (times in ms since the epoch, Spark's clock)."""
    app_id: str
    stage_id: int
    stage_attempt: int
    stage_submitted: int
    task_index: int
    original_attempt: int
    original_launch: int
    original_host: str
    original_end: str          # the attempt's end reason: Success, TaskKilled, ...
    copy_attempt: int
    copy_launch: int
    copy_host: str
    copy_end: str


def speculative_copies(log: Path) -> list[SpeculativeCopy]:
    """Spark's speculative attempts in ``log``, each with the attempt it copied: the last
    non-speculative attempt of the same task index in the same stage attempt launched before it."""
    app_id, submitted, starts, ends = "", {}, {}, {}
    for event in read_events(log):
        kind = event["Event"]
        if kind == "SparkListenerApplicationStart":
            app_id = event["App ID"]
        elif kind == "SparkListenerStageSubmitted":
            info = event["Stage Info"]
            submitted[info["Stage ID"], info["Stage Attempt ID"]] = info["Submission Time"]
        elif kind in ("SparkListenerTaskStart", "SparkListenerTaskEnd"):
            info = event["Task Info"]
            key = (event["Stage ID"], event["Stage Attempt ID"], info["Index"], info["Attempt"])
            if kind == "SparkListenerTaskStart":
                starts[key] = info
            else:
                ends[key] = event["Task End Reason"]["Reason"]
    copies = []
    for (stage, stage_attempt, index, attempt), info in sorted(starts.items()):
        if not info["Speculative"]:
            continue
        original = max((o for (s, sa, i, _), o in starts.items()
                        if (s, sa, i) == (stage, stage_attempt, index) and not o["Speculative"]
                        and o["Launch Time"] <= info["Launch Time"]), key=lambda o: o["Launch Time"])
        copies.append(SpeculativeCopy(
            app_id, stage, stage_attempt, submitted[stage, stage_attempt], index,
            original["Attempt"], original["Launch Time"], original["Host"],
            ends.get((stage, stage_attempt, index, original["Attempt"]), "(no end)"),
            attempt, info["Launch Time"], info["Host"], ends.get((stage, stage_attempt, index, attempt), "(no end)")))
    return copies


DOC_START = "<!-- measured: python -m tests.spark_cluster --out DIR --doc docs/SPARK_CLUSTER.md -->"
DOC_END = "<!-- end of measured -->"


def measured_table(generated: Generated, total_seconds: float, load: float) -> str:
    """The harness's measured numbers, as the doc shows them."""
    lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Spark {_spark_version()}, "
             f"{os.cpu_count()} cores, load average {load:.1f} at the start: the cluster (master and two "
             f"workers) registered in {generated.cluster_start_seconds:.1f} s; everything, from the first "
             f"JVM to the last one killed, {total_seconds:.1f} s.",
             "",
             "| application | codec | layout | events files | seconds | speculative copies "
             "| copy launched after the original (s) | original host -> copy host |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for app in generated.apps:
        log = generated.log_path(app["variant"])
        copies = [SpeculativeCopy(**c) for c in app["speculative_copies"]]
        lines.append(
            f"| {app['variant']} | {app['codec'] or 'none'} | {'rolling' if app['rolling'] else 'single file'}"
            f"{', in progress (driver killed)' if app['killed'] else ''} "
            f"| {len(event_files(log))} | {app['seconds']:.1f} | {len(copies)} "
            f"| {', '.join(f'{(c.copy_launch - c.original_launch) / 1000:.1f}' for c in copies)} "
            f"| {', '.join(f'{c.original_host} -> {c.copy_host}' for c in copies)} |")
    return "\n".join(lines)


def write_doc(doc: Path, table: str) -> None:
    text = doc.read_text()
    start, end = text.index(DOC_START) + len(DOC_START), text.index(DOC_END)
    doc.write_text(text[:start] + "\n" + table + "\n" + text[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.spark_cluster",
        description="Start a local Spark standalone cluster (master 127.0.0.1, one-core workers on "
                    f"{', '.join(WORKER_HOSTS)}), run one speculative application per kind of event log "
                    f"({', '.join(v.name for v in VARIANTS)}), stop the cluster, and write OUT/eventlogs/, "
                    "OUT/eventlogs_inprogress/ (the killed driver's log) and OUT/manifest.json (settings, "
                    "timings and Spark's own speculative copies).")
    parser.add_argument("--out", required=True, type=Path, help="directory to write into (created)")
    parser.add_argument("--doc", type=Path, help="also write the measured table into this doc, between "
                        "its 'measured' markers (docs/SPARK_CLUSTER.md)")
    args = parser.parse_args(argv)
    reason = java_missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    load, started = os.getloadavg()[0], time.monotonic()
    generated = generate(args.out)
    table = measured_table(generated, time.monotonic() - started, load)
    print(f"logs in {generated.eventlog_dir}, ground truth in {generated.root / 'manifest.json'}\n\n{table}")
    if args.doc:
        write_doc(args.doc, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
