"""A workload of sleeping tasks on the standalone cluster of tests/spark_cluster.py, one host slowed:
the applications of the speculation experiment (studies/spark/cluster_experiment.py), and their driver.

Each application runs a warm-up stage (one short task per slot, which starts every executor's Python
workers), then its plan's stages one job each, every task sleeping ``base_seconds`` times its
partition's work, times the slowdown its executor's host was started with: ``NURD_TASK_SLOWDOWN`` in
that worker daemon's environment, which its executors and their Python workers inherit (1 where it
is unset). Sleep, not computation, so that a task's duration does not depend on the load of a
two-core machine. Each task returns its host and the slowdown it read, so the driver records that the
setting reached the executors.

    with slowed_cluster(root, slow_host, slowdown, cores) as cluster: ...
    run_application(cluster, plan, eventlog_dir)       # one application, a driver of its own
    python -m tests.spark_workload PLAN.json RESULT.json   # the driver (run by run_application)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests import spark_cluster
from tests.spark_apps import wait_until_idle

SLOWDOWN_VAR = "NURD_TASK_SLOWDOWN"
WARMUP_SECONDS = 0.2
DRIVER_TIMEOUT = 900


def slowed_cluster(root: Path, slow_host: str, slowdown: float, cores: int):
    """The harness's cluster (master and a worker on each of WORKER_HOSTS) with ``cores`` cores per
    worker, the worker on ``slow_host`` started with NURD_TASK_SLOWDOWN=``slowdown``."""
    return spark_cluster.standalone_cluster(root, worker_cores=cores,
                                            worker_env={slow_host: {SLOWDOWN_VAR: f"{slowdown:g}"}})


def application_settings(cluster: spark_cluster.SparkCluster, name: str, cores: int, eventlog_dir: Path,
                         speculation: dict[str, str]) -> dict[str, str]:
    """The harness's loopback settings without its speculation keys, one executor of ``cores`` cores
    per worker, a plain single-file event log in ``eventlog_dir``, and ``speculation``."""
    harness = spark_cluster.driver_settings(cluster, eventlog_dir, spark_cluster.Variant(name, None, False))
    loopback = {k: v for k, v in harness.items() if not k.startswith("spark.speculation")}
    return loopback | {"spark.app.name": f"nurd-workload-{name}", "spark.executor.cores": str(cores),
                       "spark.cores.max": str(cores * len(spark_cluster.WORKER_HOSTS)),
                       "spark.eventLog.dir": Path(eventlog_dir).resolve().as_uri(), **speculation}


def run_application(cluster: spark_cluster.SparkCluster, plan: dict, eventlog_dir: Path) -> dict:
    """Runs one application of ``plan`` (``name``, ``settings``, ``slots``, ``base_seconds``,
    ``work``: per stage, each partition's work) in a driver process of its own, its event log written
    into ``eventlog_dir``; returns the driver's result (app id, seconds, slowdown read on each host)
    with ``log``, the log's path."""
    eventlog_dir.mkdir(parents=True, exist_ok=True)
    root, name = cluster.root, plan["name"]
    plan_file, result_file = root / f"plan-{name}.json", root / f"result-{name}.json"
    plan_file.write_text(json.dumps(plan))
    driver_log = root / "logs" / f"driver-{name}.log"
    driver = spark_cluster._popen([sys.executable, "-m", "tests.spark_workload", str(plan_file), str(result_file)],
                                  driver_log, spark_cluster._daemon_env(root, spark_cluster.MASTER_HOST),
                                  spark_cluster.REPO)
    cluster.processes["driver"] = driver   # killed with the cluster, whatever happens
    try:
        code = driver.wait(timeout=DRIVER_TIMEOUT)
    except subprocess.TimeoutExpired:
        spark_cluster._kill_group(driver, signal.SIGKILL)
        code = driver.wait()
    if code != 0 or not result_file.exists():
        tail = "\n".join(driver_log.read_text(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"application {name} failed (exit {code}; driver log {driver_log}):\n{tail}")
    del cluster.processes["driver"]
    result = json.loads(result_file.read_text())
    logs = [p for p in eventlog_dir.iterdir() if result["app_id"] in p.name]
    if len(logs) != 1:
        raise RuntimeError(f"{eventlog_dir}: expected one event log of {result['app_id']}, found {logs}")
    return result | {"log": str(logs[0])}


def sleeping(base_seconds: float, work: list[float]):
    """A task that sleeps base_seconds x its partition's work x its host's slowdown, and returns
    (host, slowdown read)."""
    def run(rows):
        from pyspark import TaskContext

        slowdown = float(os.environ.get(SLOWDOWN_VAR, "1"))
        time.sleep(base_seconds * work[TaskContext.get().partitionId()] * slowdown)
        yield os.environ.get("SPARK_LOCAL_IP", "unknown"), slowdown
    return run


def main(plan_file: str, result_file: str) -> None:
    from pyspark import SparkConf, SparkContext

    plan = json.loads(Path(plan_file).read_text())
    started = time.monotonic()
    sc = SparkContext(conf=SparkConf().setAll(list(plan["settings"].items())))
    try:
        seen = set()
        sc.setJobDescription("warm-up: one task per slot starts the executors' Python workers")
        slots = plan["slots"]
        seen |= set(sc.parallelize(range(slots), slots).mapPartitions(sleeping(WARMUP_SECONDS, [1.0] * slots))
                    .collect())
        for i, work in enumerate(plan["work"], 1):
            sc.setJobDescription(f"stage {i} of {len(plan['work'])}")
            seen |= set(sc.parallelize(range(len(work)), len(work))
                        .mapPartitions(sleeping(plan["base_seconds"], work)).collect())
        # a killed original's end must reach the log before the context stops
        wait_until_idle(sc)
        Path(result_file).write_text(json.dumps({
            "name": plan["name"], "app_id": sc.applicationId, "seconds": time.monotonic() - started,
            "slowdown_by_host": {host: sorted({s for h, s in seen if h == host}) for host, _ in seen}}))
    finally:
        sc.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
