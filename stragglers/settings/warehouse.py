"""The warehouse stage's settings: staging the raw rows, the selection of jobs, the checkpoints and
features (docs/PROTOCOL.md), the operator's clock tables, trace_realism and DuckDB; and
``SelectionSettings``, what the selection and features depend on (recorded with every table)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import model_validator

from stragglers.settings.stage import Grammar, SettingError, SettingsView, StageSettings, setting
from stragglers.trace_formats import FORMATS, TRACES, TraceFormat
from stragglers.settings.traces import TraceSettings

ON_BAD_ROWS = ("fail", "quarantine")
EMPTY_PARTS = ("fail", "accept")
CHECKPOINT_GRIDS = ("capped", "fixed", "equal")

_MEMORY = re.compile(r"^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.I)


def memory_size(v) -> str | None:
    return None if isinstance(v, str) and _MEMORY.match(v) else "a size such as '4GB' or '512MiB'"


def t0_before_threshold(s) -> None:
    """The rule between two settings of ``s`` (settings with ``initial_fraction`` and ``quantile``):
    t0 must come before the straggler threshold."""
    if not s.initial_fraction < s.quantile:
        raise SettingError(f"setting initial_fraction={s.initial_fraction!r} is invalid: expected a number "
                           f"below quantile={s.quantile!r} (t0 must come before the straggler threshold)")


def feature_mode_of_trace(s: "SelectionSettings") -> None:
    """The rule between the trace and the feature mode: the trace's format offers the mode."""
    modes = s.format.feature_modes
    if s.feature_mode not in modes:
        raise SettingError(f"setting feature_mode={s.feature_mode!r} is invalid: expected one of {modes} "
                           f"for trace {s.trace} (its features are {', '.join(s.format.features)})")


class WarehouseSettings(StageSettings):
    on_bad_rows: Literal[ON_BAD_ROWS] = setting("fail", env="NURD_ON_BAD_ROWS")
    """a malformed trace row: 'fail' (stop, naming file and line) or 'quarantine' (set aside in table quarantine,
    counted)"""
    empty_parts: Literal[EMPTY_PARTS] = setting("fail", env="NURD_EMPTY_PARTS")
    """a raw part with no rows while other parts of its table have rows: 'fail' (stop, naming the part) or 'accept'
    (counted and reported); the embedded trace always accepts (its generator writes parts with no rows on
    purpose)"""
    # selection and features (docs/PROTOCOL.md)
    production_rule: Literal["max_class", "priority"] = setting(
        "max_class", doc="production job: max scheduling class >= 1, or a task priority 9-11")
    min_tasks: int = setting(100, ge=2, doc="jobs with fewer tasks are not selected")
    quantile: float = setting(0.9, ge=0.5, lt=1, doc="straggler threshold: the job's latency quantile")
    initial_fraction: float = setting(0.04, gt=0, lt=1, doc="t0 = time by which this share of the tasks finished")
    checkpoint_grid: Literal[CHECKPOINT_GRIDS] = setting("capped", env="NURD_CHECKPOINT_GRID")
    """Google checkpoints between t0 and tau: 'capped' = every checkpoint_step_s, but at least checkpoint_steps of
    them (short jobs get a finer step); 'fixed' = every checkpoint_step_s (jobs with tau - t0 <= the step get
    none); 'equal' = checkpoint_steps equal steps"""
    checkpoint_step_s: int = setting(300, ge=1, doc="Google: seconds between checkpoints (one task_usage window)")
    checkpoint_steps: int = setting(10, ge=1)
    """Google: checkpoints between t0 and tau, at least ('capped') or exactly ('equal')"""
    alibaba_steps: int = setting(50, ge=1, doc="Alibaba: equal steps between t0 and tau")
    feature_mode: Literal["observed", "reference"] = setting(
        "observed", env="NURD_FEATURE_MODE",
        doc="'observed': only what was visible at the checkpoint; 'reference': the authors' leaky construction")
    min_cpu_rate_for_cpi: float = setting(1e-4, gt=0, doc="CPI/MAI of usage windows with less CPU are missing")
    max_cpi: float = setting(100.0, gt=0, doc="CPI above this is missing")
    max_mai: float = setting(10.0, gt=0, doc="MAI above this is missing")
    # the operator's clock tables (sql/operator_checkpoints.sql; stragglers/prediction/replay/clock.py decides on them)
    clock_finished_percent: int = setting(10, ge=1)
    """online clock: a decision each time a further this percent of the job's tasks (known at submission) have
    finished (10: about the paper's 10 decisions between t0 and tau)"""
    clock_interval_s: int = setting(300, ge=1)
    """online clock: a decision every this many seconds of task time while tasks run (one task_usage window), from
    t0; left at 300, a trace format with its own interval takes that (Spark event logs: 1)"""
    clock_doubling_after: int = setting(10, ge=1)
    """online clock: the interval doubles after every this many timed decisions (bounds the decisions of a long tail
    by a logarithm of its length, without knowing when the job will end)"""
    # trace_realism (stragglers/warehouse/realism.py)
    realism_against: Literal[TRACES] = setting("google_2011", env="NURD_REALISM_AGAINST",
                                               doc="trace_realism compares the configured trace with this one")
    usage_sample: str = setting("", env="NURD_USAGE_SAMPLE")
    """usage rows (CSV with a header row) standing for the usage of a trace without task_usage in trace_realism,
    e.g. the real excerpt's sample"""
    # DuckDB (out of core)
    duckdb_memory_limit: Annotated[str, Grammar(memory_size)] = setting(
        "4GB", env="NURD_DUCKDB_MEMORY_LIMIT", doc="DuckDB spills to disk (<data_dir>/duckdb_tmp) past this")
    duckdb_threads: int = setting(0, ge=0, doc="DuckDB threads; 0 = DuckDB's default")
    duckdb_slice_rows: int = setting(8_000_000, env="NURD_DUCKDB_SLICE_ROWS", ge=1000)
    """a step over the events whose SQL has a ${job_slice} condition runs in slices of job ids of about this many
    task_events rows each (one transaction; the rows are the same), so its memory stays within
    duckdb_memory_limit whatever the trace's length; the default fits 4GB"""

    @model_validator(mode="after")
    def _t0_before_threshold(self):
        t0_before_threshold(self)
        return self


def format_clock_interval(trace: str, configured: int) -> int:
    """The online clock's interval on ``trace``: ``configured``, unless it is the setting's default and
    the trace's format has an interval of its own (a Spark stage lasts seconds, not hours:
    TraceFormat.clock_interval_s)."""
    own = FORMATS[trace].clock_interval_s
    return own if own and configured == WarehouseSettings.model_fields["clock_interval_s"].default else configured


class SelectionSettings(SettingsView, models=(TraceSettings, WarehouseSettings), linked=(
        "trace", "production_rule", "min_tasks", "quantile", "initial_fraction", "checkpoint_grid",
        "checkpoint_step_s", "checkpoint_steps", "alibaba_steps", "clock_finished_percent", "clock_interval_s",
        "clock_doubling_after", "feature_mode", "min_cpu_rate_for_cpi", "max_cpi", "max_mai", "on_bad_rows",
        "empty_parts")):
    """What the warehouse's selection and features depend on (recorded with every table)."""

    rules = (t0_before_threshold, feature_mode_of_trace)

    @property
    def format(self) -> TraceFormat:
        return FORMATS[self.trace]

    @property
    def is_google_format(self) -> bool:
        return self.format.is_google_layout

    def step_us_sql(self, grid: str | None = None) -> str:
        """The checkpoint step in microseconds, as an SQL expression over a job's ``c.t0_us`` and
        ``c.tau_us`` (sql/job_checkpoints.sql); ``grid`` defaults to the setting."""
        if not self.is_google_format:
            # Alibaba: a grid of at most `alibaba_steps` equal steps in [t0, tau)
            return f"greatest(1, (c.tau_us - c.t0_us) // {self.alibaba_steps})"
        fixed = str(self.checkpoint_step_s * 1_000_000)
        # ceil: at most checkpoint_steps checkpoints in [t0, tau) (a floor step would give one more)
        equal = f"greatest(1, ceil((c.tau_us - c.t0_us) / {self.checkpoint_steps}))"
        return {"fixed": fixed, "equal": equal, "capped": f"least({fixed}, {equal})"}[grid or self.checkpoint_grid]

    def sql_params(self) -> dict:
        return self.as_dict() | {"step_us": self.step_us_sql()}
