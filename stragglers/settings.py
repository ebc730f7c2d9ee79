"""Typed settings of the selection, features and online evaluation.

Plain dataclasses (no Dagster): the Dagster resource in ``pipeline`` fills
them from environment variables / run config, tests build them directly.
Every bad value is rejected with an error naming the setting.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields

from stragglers.traces.formats import FORMATS, TRACES, TraceFormat

GOOGLE_FORMAT = tuple(n for n, f in FORMATS.items() if f.is_google_layout)
ALIBABA_FORMAT = tuple(n for n, f in FORMATS.items() if not f.is_google_layout)


class SettingError(ValueError):
    """A setting has a value the pipeline cannot use."""


def _check(cond: bool, name: str, value, expected: str) -> None:
    if not cond:
        raise SettingError(f"setting {name}={value!r} is invalid: expected {expected}")


@dataclass(frozen=True)
class SelectionSettings:
    trace: str = "synthetic"
    production_rule: str = "max_class"     # or "priority" (tasks with priority 9..11)
    min_tasks: int = 100
    quantile: float = 0.9                  # straggler threshold: the job's latency quantile
    initial_fraction: float = 0.04         # t0 = time by which this share of tasks finished
    checkpoint_step_s: int = 300           # Google: one usage window
    alibaba_steps: int = 50                # Alibaba: equal steps between t0 and tau
    feature_mode: str = "observed"         # or "reference" (the authors' leaky construction)
    min_cpu_rate_for_cpi: float = 1e-4     # CPI/MAI of windows with less CPU are missing
    max_cpi: float = 100.0
    max_mai: float = 10.0

    def __post_init__(self) -> None:
        _check(self.trace in TRACES, "NURD_TRACE", self.trace, f"one of {TRACES}")
        _check(self.production_rule in ("max_class", "priority"), "production_rule",
               self.production_rule, "'max_class' or 'priority'")
        _check(isinstance(self.min_tasks, int) and self.min_tasks >= 2, "min_tasks", self.min_tasks, "an integer >= 2")
        _check(0.5 <= self.quantile < 1, "quantile", self.quantile, "a number in [0.5, 1)")
        _check(0 < self.initial_fraction < self.quantile, "initial_fraction", self.initial_fraction,
               "a number in (0, quantile)")
        _check(isinstance(self.checkpoint_step_s, int) and self.checkpoint_step_s >= 1,
               "checkpoint_step_s", self.checkpoint_step_s, "an integer >= 1 (seconds)")
        _check(isinstance(self.alibaba_steps, int) and self.alibaba_steps >= 1, "alibaba_steps",
               self.alibaba_steps, "an integer >= 1")
        _check(self.feature_mode in ("observed", "reference"), "feature_mode", self.feature_mode,
               "'observed' or 'reference'")
        modes = self.format.feature_modes
        _check(self.feature_mode in modes, "feature_mode", self.feature_mode,
               f"one of {modes} for trace {self.trace} (its features are "
               f"{', '.join(self.format.features)})")

    @property
    def format(self) -> TraceFormat:
        return FORMATS[self.trace]

    @property
    def is_google_format(self) -> bool:
        return self.format.is_google_layout

    def sql_params(self) -> dict:
        p = asdict(self)
        p["step_us"] = (
            str(self.checkpoint_step_s * 1_000_000) if self.is_google_format
            # Alibaba: a grid of at most `alibaba_steps` equal steps in [t0, tau)
            else f"greatest(1, (c.tau_us - c.t0_us) // {self.alibaba_steps})"
        )
        return p


@dataclass(frozen=True)
class EvaluationSettings:
    seed: int = 0
    quantile: float = 0.9
    alpha: float = 0.5                     # NURD calibration
    eps: float = 0.05                      # NURD minimum weight
    regressor: str = "xgboost"             # or "sklearn" (GradientBoostingRegressor, the authors')
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    min_finished: int = 20                 # jobs with fewer finished tasks are skipped (counted)
    n_boot: int = 1000                     # bootstrap resamples over jobs

    def __post_init__(self) -> None:
        _check(isinstance(self.seed, int) and self.seed >= 0, "seed", self.seed, "an integer >= 0")
        _check(0 < self.alpha < 1, "alpha", self.alpha, "a number in (0, 1)")
        _check(0 < self.eps <= 1, "eps", self.eps, "a number in (0, 1]")
        _check(self.regressor in ("xgboost", "sklearn"), "regressor", self.regressor, "'xgboost' or 'sklearn'")
        _check(isinstance(self.workers, int) and self.workers >= 1, "workers", self.workers, "an integer >= 1")
        _check(isinstance(self.min_finished, int) and self.min_finished >= 2, "min_finished",
               self.min_finished, "an integer >= 2")

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}
