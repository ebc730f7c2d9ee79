"""The speculation experiment's workload and settings (studies/spark/cluster_experiment.py): the
application it runs on tests/spark_cluster.py's standalone cluster, the three settings it compares
(speculation off, the advice's recommended setting, Spark 4's defaults) and the keys each runs with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

OFF, RECOMMENDED, DEFAULTS = "off", "recommended", "spark-4.0-defaults"
SETTINGS = (OFF, RECOMMENDED, DEFAULTS)
OFF_CONF = {"spark.speculation": "false"}
#: Spark 4's defaults as Spark 4 runs them: every other key at its default, the efficiency check on.
DEFAULTS_CONF = {"spark.speculation": "true"}
#: The replay models the rule without Spark's efficiency check (it needs the running tasks' progress,
#: which event logs do not keep), so the recommended setting runs without it.
NO_EFFICIENCY_CHECK = {"spark.speculation.efficiency.enabled": "false"}


@dataclass(frozen=True)
class Workload:
    """``stages`` stages of ``tasks`` tasks over two workers of ``cores`` cores each (tests/spark_cluster.py's
    127.0.0.2 and 127.0.0.3); a task sleeps ``base_seconds`` x its partition's work (``skew`` for
    ``skewed`` partitions of each stage, else 1) x ``slowdown`` on ``slow_host``."""
    stages: int = 5
    tasks: int = 24
    base_seconds: float = 0.6
    skewed: int = 2
    skew: float = 4.0
    slowdown: float = 3.0
    cores: int = 2
    slow_host: str = "127.0.0.3"

    @property
    def slots(self) -> int:
        return 2 * self.cores

    def skewed_partitions(self, stage: int) -> list[int]:
        """Spread over the stage, and moved from stage to stage, so that skewed tasks start in
        different waves."""
        return sorted({(i * self.tasks // self.skewed + 3 + 5 * stage) % self.tasks for i in range(self.skewed)})

    def work(self) -> list[list[float]]:
        return [[self.skew if p in self.skewed_partitions(s) else 1.0 for p in range(self.tasks)]
                for s in range(self.stages)]

    def text(self) -> str:
        return (f"{self.stages} stages of {self.tasks} tasks on two workers of {self.cores} cores each "
                f"({self.slots} slots, so {self.tasks / self.slots:g} tasks a slot); a task sleeps "
                f"{self.base_seconds:g} s, x{self.skew:g} for {self.skewed} skewed partitions a stage, "
                f"x{self.slowdown:g} on the slow host {self.slow_host} (NURD_TASK_SLOWDOWN in its worker's "
                f"environment)")


WORKLOAD = Workload()


def run_application(cluster, workload: Workload, name: str, conf: dict[str, str], log_dir: Path) -> dict:
    """One application of ``workload`` on ``cluster`` (tests/spark_workload.py's), with the speculation
    settings ``conf``, its event log written into ``log_dir``: the driver's result (app id, seconds,
    the slowdown the tasks read on each host, the log's path)."""
    from tests import spark_workload   # tests/ is importable from the project root only (python -m)

    settings = spark_workload.application_settings(cluster, name, workload.cores, log_dir, conf)
    return spark_workload.run_application(cluster, {"name": name, "settings": settings, "slots": workload.slots,
                                                    "base_seconds": workload.base_seconds,
                                                    "work": workload.work()}, log_dir)
