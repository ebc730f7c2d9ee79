"""Every trace the pipeline reads, one frozen ``TraceFormat`` each: plain data.

The one place that knows what distinguishes the traces: their table layout,
feature list, SQL variant, how they are staged, where they live publicly and
which column of the paper's Table 3 they are compared with. Everything else
asks ``trace_format(name)`` instead of testing names.

It sits at the bottom of the package (docs/ARCHITECTURE.md, "Layers"): the
settings check ``NURD_TRACE`` and the feature settings against it, and every
stage reads it. How a trace is fetched is the traces stage's
(``stragglers.traces.fetch``, by layout and ``embedded``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

#: Public, credential-free HTTPS view of gs://clusterdata-2011-2.
GOOGLE_2011_URL = "https://storage.googleapis.com/clusterdata-2011-2/"
#: Alibaba cluster-trace-v2018, batch_instance archive (tens of GB).
ALIBABA_2018_URL = "http://aliopentrace.oss-cn-beijing.aliyuncs.com/v2018Traces/batch_instance.tar.gz"
#: Mirror listed in alibaba/clusterdata cluster-trace-v2018/trace_2018.md.
ALIBABA_2018_MIRROR_URL = "http://clusterdata2018pubcn.oss-cn-beijing.aliyuncs.com/batch_instance.tar.gz"
#: PLACEHOLDER. Alibaba hands out the v2017 download link only after a short
#: survey (see alibaba/clusterdata cluster-trace-v2017/README.md), so there is
#: no stable public URL. Override it with ``NURD_TRACE_URL`` (or the ``url``
#: argument) pointing at the archive you were given, or at a local copy.
ALIBABA_2017_URL = "http://aliopentrace.oss-cn-beijing.aliyuncs.com/v2017Traces/batch_instance.tar.gz"

#: The 15 features of the NURD paper's Table 1 (sql/checkpoint_features.sql computes them).
GOOGLE_FEATURES = (
    "mcu", "maxcpu", "scpu", "cmu", "amu", "maxmu", "upc", "tpc",
    "mio", "maxio", "mdk", "cpi", "mai", "ev", "fl",
)
#: Scheduler-visible features computed from events only (sql/event_features.sql, raw values;
#: docs/EVENT_FEATURES.md): the task, its machine at that moment, its job so far, earlier runs of
#: its logical job name. Google layout only (Alibaba's batch_instance has no per-event rows).
EVENT_FEATURES = (
    "elapsed", "attempts", "evictions", "failures", "lost_time", "since_schedule", "sched_delay",
    "sched_delay_rel", "index_rank", "cpu_request_rel", "memory_request_rel", "disk_request_rel", "priority",
    "different_machine",
    "machine_cpus", "machine_memory", "machine_platform", "machine_tasks", "machine_cpu_load",
    "machine_memory_load", "machine_bad_events", "machine_history_tasks", "machine_slowness",
    "job_finished_share", "job_running", "job_p50", "job_p75", "job_elapsed_rel",
    "recurring_runs", "recurring_last_duration", "recurring_last_p50", "recurring_last_p90",
)
#: The event features that are the task's own clock. For a finished task each is its latency (or a
#: function of it), so a model fitted on finished tasks learns the target from them, and they say
#: nothing about which running task is slower (every one has run t). The survival family leaves them
#: out: elapsed time enters its model through the conditioning on T > t (docs/EVALUATION.md).
CLOCK_FEATURES = ("elapsed", "since_schedule", "job_elapsed_rel")
#: NURD_FEATURE_SET values: which columns of checkpoint_features the methods see
#: ('auto' is resolved per trace by stragglers.prediction.evaluation.run.resolve_feature_set).
FEATURE_SETS = ("auto", "usage", "events", "all")
#: Alibaba batch_instance's static per-instance summaries (sql/checkpoint_features__alibaba.sql).
ALIBABA_FEATURES = ("cpu_avg", "cpu_max", "mem_avg", "mem_max")
#: What Spark's driver knows of a task at a decision (sql/checkpoint_features__spark.sql): its clock,
#: its attempts, its locality, its executor's and host's history in the application, and the
#: finished tasks of its stage attempt (never its own end metrics).
SPARK_FEATURES = (
    "elapsed", "failures", "locality", "executor_running", "executor_tasks", "executor_mean_s",
    "executor_slowness", "host_tasks", "host_mean_s", "host_slowness", "job_finished_share", "job_mean_run_s",
    "job_mean_input_mb", "job_mean_shuffle_read_mb", "job_elapsed_rel",
)

GOOGLE_TABLES = ("job_events", "task_events", "task_usage")
ALIBABA_TABLES = ("batch_instance",)

#: What each typed staging view (sql/<view>.sql, whose comment gives the units) reads from the raw
#: files: column -> DuckDB type, in the files' field order (sql/read_raw_csv.sql). Google: the
#: clusterdata-2011-2 tables (the bucket's own schema.csv: stragglers/traces/synth/formats.py);
#: Alibaba: batch_instance.csv of v2018, and of v2017 (its view maps it onto v2018's names).
RAW_COLUMNS: dict[str, dict[str, str]] = {
    "stg_job_events": dict(
        time="BIGINT", missing_info="INTEGER", job_id="BIGINT", event_type="INTEGER", user_name="VARCHAR",
        scheduling_class="INTEGER", job_name="VARCHAR", logical_job_name="VARCHAR"),
    "stg_task_events": dict(
        time="BIGINT", missing_info="INTEGER", job_id="BIGINT", task_index="BIGINT", machine_id="BIGINT",
        event_type="INTEGER", user_name="VARCHAR", scheduling_class="INTEGER", priority="INTEGER",
        cpu_request="DOUBLE", memory_request="DOUBLE", disk_request="DOUBLE", different_machine="INTEGER"),
    "stg_task_usage": dict(
        start_time="BIGINT", end_time="BIGINT", job_id="BIGINT", task_index="BIGINT", machine_id="BIGINT",
        cpu_rate="DOUBLE", canonical_memory="DOUBLE", assigned_memory="DOUBLE", unmapped_page_cache="DOUBLE",
        total_page_cache="DOUBLE", maximum_memory="DOUBLE", disk_io_time="DOUBLE", local_disk_space="DOUBLE",
        maximum_cpu_rate="DOUBLE", maximum_disk_io_time="DOUBLE", cpi="DOUBLE", mai="DOUBLE",
        sample_portion="DOUBLE", aggregation_type="INTEGER", sampled_cpu_usage="DOUBLE"),
    "stg_machine_events": dict(
        time="BIGINT", machine_id="BIGINT", event_type="INTEGER", platform_id="VARCHAR", cpus="DOUBLE",
        memory="DOUBLE"),
    "stg_batch_instance": dict(
        instance_name="VARCHAR", task_name="VARCHAR", job_name="VARCHAR", task_type="VARCHAR", status="VARCHAR",
        start_time="BIGINT", end_time="BIGINT", machine_id="VARCHAR", seq_no="BIGINT", total_seq_no="BIGINT",
        cpu_avg="DOUBLE", cpu_max="DOUBLE", mem_avg="DOUBLE", mem_max="DOUBLE"),
    "stg_batch_instance__2017": dict(
        start_timestamp="BIGINT", end_timestamp="BIGINT", job_id="VARCHAR", task_id="VARCHAR",
        machine_id="VARCHAR", status="VARCHAR", seq_no="BIGINT", total_seq_no="BIGINT", cpu_max="DOUBLE",
        cpu_avg="DOUBLE", mem_max="DOUBLE", mem_avg="DOUBLE"),
}


#: A trace's raw layout: Google's clusterdata-2011-2 tables, Alibaba's batch_instance, Spark's event logs.
Layout = Literal["google", "alibaba", "spark"]


@dataclass(frozen=True)
class TraceFormat:
    name: str                           # the NURD_TRACE value
    layout: Layout                      # how its raw files are laid out (the stages dispatch on it)
    tables: tuple[str, ...]             # raw tables, as on the source
    features: tuple[str, ...]           # checkpoint_features columns, in order: the usage features
    feature_modes: tuple[str, ...]      # feature_mode values the format's SQL implements
    sql_variant: str                    # suffix of the format's SQL files ("" = the shared file)
    staging_sql: str                    # the SQL file of the raw table's staging view (Alibaba)
    default_url: str | None             # public location (None: generated locally)
    paper_column: str | None            # column of the paper's Table 3 ("google" / "alibaba"), if any
    embedded: bool = False              # generated locally by stragglers.traces.synth (else downloaded)
    event_features: tuple[str, ...] = ()  # checkpoint_features columns from events (after the usage ones)
    paper_protocol_not_applicable: str = ""   # why the paper's protocol does not apply ("" where it does)
    read_in_place: bool = False         # read where NURD_TRACE_URL points (never fetched under raw/)
    clock_interval_s: int | None = None  # the operator's timed decisions' interval where the setting is not given

    @property
    def columns(self) -> tuple[str, ...]:
        """Every feature column checkpoint_features holds for this format."""
        return self.features + self.event_features

    def feature_set(self, name: str) -> tuple[str, ...]:
        """The columns of feature set ``name`` (usage, events or all; 'auto' is resolved before)."""
        sets = {"usage": self.features, "events": self.event_features, "all": self.columns}
        if name not in sets:
            raise ValueError(f"feature set {name!r} is unknown: expected one of {', '.join(sets)}")
        if not sets[name]:
            raise ValueError(f"setting feature_set={name!r} is invalid for trace {self.name}: it has no "
                             f"{name} features (its features are {', '.join(self.columns)})")
        return sets[name]

    @property
    def is_google_layout(self) -> bool:
        return self.layout == "google"

    def sql_name(self, table: str, sql_dir: Path) -> str:
        """The SQL file building ``table`` for this format: the variant when one exists."""
        if self.sql_variant and (sql_dir / f"{table}__{self.sql_variant}.sql").exists():
            return f"{table}__{self.sql_variant}"
        return table


_GOOGLE = dict(layout="google", tables=GOOGLE_TABLES, features=GOOGLE_FEATURES, event_features=EVENT_FEATURES,
               feature_modes=("observed", "reference"), sql_variant="", staging_sql="")
# Alibaba's features are static per-instance summaries: there is no "as of the checkpoint"
# to leak, so the reference (leaky) construction does not exist for them.
_ALIBABA = dict(layout="alibaba", tables=ALIBABA_TABLES, features=ALIBABA_FEATURES,
                feature_modes=("observed",), sql_variant="alibaba")

FORMATS: dict[str, TraceFormat] = {f.name: f for f in (
    TraceFormat("synthetic", **_GOOGLE, default_url=None, paper_column=None, embedded=True),
    TraceFormat("google_2011", **_GOOGLE, default_url=GOOGLE_2011_URL, paper_column="google"),
    TraceFormat("alibaba_2018", **_ALIBABA, staging_sql="stg_batch_instance", default_url=ALIBABA_2018_URL,
                paper_column="alibaba"),
    TraceFormat("alibaba_2017", **_ALIBABA, staging_sql="stg_batch_instance__2017", default_url=ALIBABA_2017_URL,
                paper_column="alibaba"),
    TraceFormat("synthetic_alibaba", **_ALIBABA, staging_sql="stg_batch_instance", default_url=None,
                paper_column=None, embedded=True),
    # An operator's own Spark event logs (docs/TRACES.md): read in place from NURD_TRACE_URL, staged
    # by stragglers.warehouse.spark_staging (no raw table of its own), Spark's rule replayed by
    # stragglers.prediction.spark_speculation; a job is a stage attempt (sql/*__spark.sql). A stage
    # lasts seconds (median 0.6 s on the real logs): timed decisions every second, not every 300.
    TraceFormat("spark_eventlog", layout="spark", tables=(), features=SPARK_FEATURES, feature_modes=("observed",),
                sql_variant="spark", staging_sql="", default_url=None, paper_column=None,
                read_in_place=True, clock_interval_s=1,
                paper_protocol_not_applicable="the paper's protocol needs tasks' usage samples, which Spark "
                                              "event logs do not keep: only the operator's protocol applies"),
)}

TRACES: tuple[str, ...] = tuple(FORMATS)


def trace_format(name: str) -> TraceFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"setting NURD_TRACE={name!r} is invalid: expected one of {TRACES}") from None
