"""Settings of the pipeline as a Dagster resource.

Every field can come from an environment variable (CONTRACT.md names) and be
overridden in the launchpad / run config. ``selection()`` and ``evaluation()``
hand plain typed settings to the Dagster-free code.
"""


import os
from pathlib import Path

import dagster as dg

from stragglers.traces.download import parse_parts
from stragglers.settings import EvaluationSettings, SelectionSettings
from stragglers.traces.fetch import SyntheticScale, alibaba_csv, raw_dir


class NurdSettings(dg.ConfigurableResource):
    """Where data lives, which trace, and every protocol setting (PROTOCOL.md)."""

    data_dir: str = "data"
    trace: str = "synthetic"
    trace_url: str = ""                 # "" = the chosen trace's public location
    trace_parts: str = "2"              # Google parts: N, "all", or per table "task_events=0-13,job_events=all"
    download_workers: int = 4
    synthetic_seed: int = 2011
    synthetic_jobs: int = 48
    synthetic_parts: int = 8
    # selection and features
    production_rule: str = "max_class"
    min_tasks: int = 100
    quantile: float = 0.9
    initial_fraction: float = 0.04
    checkpoint_step_s: int = 300
    alibaba_steps: int = 50
    feature_mode: str = "observed"
    # trace_realism
    realism_against: str = "google_2011"  # the trace the configured one is compared with
    usage_sample: str = ""                # usage rows (CSV with header) for a trace without task_usage
    # online evaluation
    seed: int = 0
    regressor: str = "xgboost"
    alpha: float = 0.5
    eps: float = 0.05
    workers: int = 0                    # 0 = one per core
    min_finished: int = 20
    n_boot: int = 1000
    # DuckDB (out of core)
    duckdb_memory_limit: str = "4GB"
    duckdb_threads: int = 0             # 0 = DuckDB's default (all cores)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    @property
    def raw_path(self) -> Path:
        return raw_dir(self.data_dir, self.trace)

    @property
    def alibaba_csv(self) -> Path:
        return alibaba_csv(self.data_dir, self.trace)

    @property
    def parts(self) -> int | str:
        return parse_parts(self.trace_parts)

    @property
    def scale(self) -> SyntheticScale:
        return SyntheticScale(seed=self.synthetic_seed, n_jobs=self.synthetic_jobs, n_parts=self.synthetic_parts)

    def selection(self) -> SelectionSettings:
        return SelectionSettings(
            trace=self.trace, production_rule=self.production_rule, min_tasks=self.min_tasks,
            quantile=self.quantile, initial_fraction=self.initial_fraction,
            checkpoint_step_s=self.checkpoint_step_s, alibaba_steps=self.alibaba_steps,
            feature_mode=self.feature_mode)

    def evaluation(self) -> EvaluationSettings:
        return EvaluationSettings(
            seed=self.seed, quantile=self.quantile, alpha=self.alpha, eps=self.eps, regressor=self.regressor,
            workers=self.workers or (os.cpu_count() or 1), min_finished=self.min_finished, n_boot=self.n_boot)


def _env(name: str, default: str):
    """An EnvVar when the variable is set (the UI shows where the value came from), else the default."""
    return dg.EnvVar(name) if os.environ.get(name) else default


def _env_int(name: str, default: int):
    return dg.EnvVar.int(name) if os.environ.get(name) else default


def settings_from_env() -> NurdSettings:
    return NurdSettings(
        data_dir=_env("NURD_DATA_DIR", "data"),
        trace=_env("NURD_TRACE", "synthetic"),
        trace_url=_env("NURD_TRACE_URL", ""),
        trace_parts=_env("NURD_TRACE_PARTS", "2"),
        seed=_env_int("NURD_SEED", 0),
        workers=_env_int("NURD_WORKERS", 0),
        feature_mode=_env("NURD_FEATURE_MODE", "observed"),
        synthetic_jobs=_env_int("NURD_SYNTHETIC_JOBS", 48),
        realism_against=_env("NURD_REALISM_AGAINST", "google_2011"),
        usage_sample=_env("NURD_USAGE_SAMPLE", ""),
        duckdb_memory_limit=_env("NURD_DUCKDB_MEMORY_LIMIT", "4GB"),
    )


def warehouse_path(data_dir: str | None = None) -> Path:
    return Path(data_dir or os.environ.get("NURD_DATA_DIR") or "data") / "warehouse.duckdb"
