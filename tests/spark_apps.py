"""The driver of tests/spark_cluster.py: runs its plan's applications one after the other in this
process (one driver JVM for all), and writes each one's app id and seconds.

    python -m tests.spark_apps PLAN.json RESULT.json

Each application runs one stage per slowed partition, over ``partitions`` partitions; the slowed
partition's first attempt sleeps, every other attempt returns at once. A killed application's driver
(this process and its JVM) kills itself after its stages, as a crashed driver would, leaving its
event log in progress: it runs last. A rolling application first
runs a one-task job that carries a local property larger than Spark's smallest rolling file size, as
a long job description or query text would, so its log rolls over though the application is tiny.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path


def slow_first_attempt(slowed: int, seconds: float):
    def run(rows):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx.partitionId() == slowed and ctx.attemptNumber() == 0:
            time.sleep(seconds)
        yield sum(rows)
    return run


def wait_until_idle(sc, timeout: float = 60) -> None:
    """Until the scheduler has no task running: a killed original ends after its copy's stage has
    completed, and stopping before would drop its end from the log. The scheduler's own count is read
    (the status store's executor summaries are written on a period and can say 0 too early); then a
    moment for the scheduler's event loop to post the task's end to the event log."""
    scheduler = sc._jsc.sc().taskScheduler()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = scheduler.runningTasksByExecutors().mkString(",")   # "0 -> 1,1 -> 0"
        if all(int(pair.split("->")[1]) == 0 for pair in running.split(",") if "->" in pair):
            time.sleep(0.5)
            return
        time.sleep(0.1)
    raise RuntimeError(f"tasks still running {timeout:.0f} s after the last job")


def run_app(app: dict, results: list[dict], result_file: Path) -> None:
    from pyspark import SparkConf, SparkContext

    started = time.monotonic()
    sc = SparkContext(conf=SparkConf().setAll(list(app["settings"].items())))
    try:
        if app["padding_bytes"]:
            sc.setJobDescription("padding: a job whose properties fill a rolling event log file")
            sc.setLocalProperty("nurd.padding", "x" * app["padding_bytes"])
            sc.parallelize([0], 1).count()
            sc.setLocalProperty("nurd.padding", None)
        for slowed in app["slowed"]:
            sc.setJobDescription(f"partition {slowed} of {app['partitions']} slowed on its first attempt")
            rdd = sc.parallelize(range(app["partitions"] * 10), app["partitions"])
            rdd.mapPartitions(slow_first_attempt(slowed, app["slow_seconds"])).collect()
        if not app["killed"]:
            wait_until_idle(sc)
        results.append({"variant": app["variant"], "app_id": sc.applicationId, "slowed": app["slowed"],
                        "seconds": time.monotonic() - started})
        result_file.write_text(json.dumps(results))
        if app["killed"]:
            os.killpg(0, signal.SIGKILL)
    finally:
        sc.stop()


def main(plan_file: str, result_file: str) -> None:
    results: list[dict] = []
    for app in json.loads(Path(plan_file).read_text()):
        run_app(app, results, Path(result_file))


if __name__ == "__main__":
    main(*sys.argv[1:])
