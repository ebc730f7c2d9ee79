"""The speculation experiment's prediction (studies/spark/cluster_experiment.py): the advice's answer on
the off runs' event logs, for the setting it recommends, Spark 4's defaults and speculation off."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from stragglers.advice.spark import advise
from stragglers.prediction.engine.spark_rule import SPARK_4_DEFAULTS
from stragglers.settings import Settings
from stragglers.warehouse.spark_staging import TRACE
from studies.spark.experiment_workload import DEFAULTS, DEFAULTS_CONF, OFF, OFF_CONF, RECOMMENDED, WORKLOAD

#: The budget of extra executor time (percent of the stages' own) the advice is asked at.
BUDGET_PCT = 5.0


@dataclass(frozen=True)
class Rule:
    quantile: float
    multiplier: float
    min_task_runtime_ms: float
    interval_ms: float

    def text(self) -> str:
        return (f"quantile {self.quantile:g}, multiplier {self.multiplier:g}, minTaskRuntime "
                f"{self.min_task_runtime_ms:g} ms")


@dataclass(frozen=True)
class Predicted:
    """What the advice says of one setting, per stage on the stages it scores (NaN: it scored none)."""
    rule: Rule | None            # None: speculation off
    conf: dict[str, str]         # the spark.speculation* keys to run it with
    cut_pct: float               # mean stage-time cut, percent of the stage's time
    cut_lo: float                # its 95% interval
    cut_hi: float
    extra_pct: float             # mean extra executor time, percent of the stage's own
    copies: float                # copies a stage


@dataclass(frozen=True)
class Prediction:
    settings: dict[str, Predicted]   # OFF, RECOMMENDED (rule None: keep speculation off), DEFAULTS
    advice: list[str]                # the advice in its own words, its first line the verdict
    scored: int                      # the stages the predictions are on
    stages: int                      # the stages it read


def predict(log_dir: Path, min_tasks: int = WORKLOAD.tasks) -> Prediction:
    """The advice on the event logs in ``log_dir`` (its stage attempts of ``min_tasks`` tasks, every
    one of which finishes: the workload's, not the warm-up) at BUDGET_PCT extra executor time: the
    setting it recommends and, for it, Spark 4's defaults and speculation off (what the logs ran), the
    predicted cut [95% interval], extra executor time and copies a stage. The advice is asked here
    only. Today it is ``nurd-spark advise`` (stragglers/advice/spark.py): it scores a stage on the
    stages that ended before it started, once enough have; its row for the recommended setting is
    "following this answer" (each scored stage run with the setting chosen on its earlier ones)."""
    settings = Settings.from_env({}, trace=TRACE, min_tasks=min_tasks, min_finished=min_tasks)
    answer, _ = advise(Path(log_dir), BUDGET_PCT / 100, settings=settings)
    rows = {r.who: r for r in answer.rows}

    def predicted(rule, conf: dict[str, str], who: str) -> Predicted:
        r = rows[who]
        return Predicted(rule and Rule(rule.quantile, rule.multiplier, 1000 * rule.min_task_runtime_s,
                                       1000 * rule.interval_s), conf,
                         100 * r.cut, 100 * r.cut_lo, 100 * r.cut_hi, 100 * r.extra, r.copies)

    chosen = answer.recommended
    return Prediction({OFF: predicted(None, OFF_CONF, "what you run"),
                       RECOMMENDED: predicted(chosen, conf_keys(answer.conf()) if chosen else OFF_CONF,
                                              "following this answer"),
                       DEFAULTS: predicted(SPARK_4_DEFAULTS, DEFAULTS_CONF, "Spark 4.0's defaults")},
                      answer.lines(), len(answer.split.scored), answer.stages)


def conf_keys(conf: str) -> dict[str, str]:
    """The spark.speculation* keys of a spark-defaults.conf block."""
    return dict(re.findall(r"^(spark\.speculation\S*)\s+(\S+)$", conf, re.M))
