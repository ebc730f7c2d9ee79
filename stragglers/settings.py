"""The pipeline's settings: one model, one default per setting, one check per setting.

``Settings`` (plain frozen dataclass, no Dagster) lists every setting once: its
default, its environment variable (if any) and its check.  Everything else is
derived from it:

- ``Settings.from_env()`` reads the ``NURD_...`` variables (a value that does not
  parse or check is rejected with an error naming the variable);
- the Dagster resource ``nurd`` (``assets/resources.py``) has one config field per
  setting, generated from this class; its ``settings()`` validates them all at once;
- ``SelectionSettings`` and ``EvaluationSettings``, the typed subsets handed to the
  Dagster-free code, take their defaults and checks from here (tests build them
  directly).

Every bad value raises ``SettingError`` naming the setting (and its variable).
"""

from __future__ import annotations

import difflib
import os
import re
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from stragglers.trace_formats import FEATURE_SETS, FORMATS, TRACES, TraceFormat

ON_BAD_ROWS = ("fail", "quarantine")
EMPTY_PARTS = ("fail", "accept")
CHECKPOINT_GRIDS = ("capped", "fixed", "equal")
DECISION_CLOCKS = ("online", "legacy_grid")
# The values each protocol setting accepts (first: this pipeline's protocol, the default).
PROTOCOL_CHOICES = {
    "latency_normalization": ("none", "job_minmax"),
    "quantiles": ("interpolated", "sorted_index"),
    "test_set": ("running_at_t0", "length_filter"),
    "horizon": ("tau", "longest_straggler", "end"),
    "threshold": ("oracle", "online"),
    "intervention": ("relaunch", "speculate"),
    "latency": ("lifecycle", "usage_windows"),
    "baseline_params": ("ours", "authors"),
}


class SettingError(ValueError):
    """A setting has a value the pipeline cannot use."""


def require(cond: bool, name: str, value, expected: str) -> None:
    """Raise a SettingError naming the setting, its value and what was expected unless ``cond``: the
    check of the systems' own typed settings (Hound's, the node ranking's, failure prediction's)."""
    if not cond:
        raise SettingError(f"setting {name}={value!r} is invalid: expected {expected}")


# --------------------------------------------------------------------------- checks
# A check returns None when the value is fine, else what was expected. A check may also carry
# ``closest(value)``: the allowed value nearest a rejected one, for the error's "did you mean".
Check = Callable[[Any], "str | None"]


def _with_closest(check: Check, closest: Callable[[Any], Any]) -> Check:
    check.closest = closest   # type: ignore[attr-defined]
    return check


def closest_word(value, words, cutoff: float = 0.0) -> str | None:
    """The word of ``words`` nearest ``value`` by difflib's ratio (None when none reaches ``cutoff``)."""
    found = difflib.get_close_matches(str(value).strip().lower(), list(words), n=1, cutoff=cutoff)
    return found[0] if found else None


def one_of(*choices: str) -> Check:
    return _with_closest(lambda v: None if v in choices else f"one of {', '.join(repr(c) for c in choices)}",
                         lambda v: closest_word(v, choices))


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def int_at_least(lo: int) -> Check:
    return _with_closest(lambda v: None if isinstance(v, int) and not isinstance(v, bool) and v >= lo
                         else f"an integer >= {lo}",
                         lambda v: max(lo, round(v)) if _number(v) else None)


def number_in(lo: float, hi: float, *, lo_open=False, hi_open=False) -> Check:
    def check(v):
        ok = _number(v) and ((lo < v if lo_open else lo <= v) and (v < hi if hi_open else v <= hi))
        return None if ok else f"a number in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"

    def closest(v):   # an open bound has no closest allowed value: none is offered there
        if not _number(v):
            return None
        if v <= lo:
            return None if lo_open else lo
        return None if hi_open else hi
    return _with_closest(check, closest)


#: The embedded trace's hand-made jobs (one per situation the tests name: docs/SYNTHETIC_TRACE.md);
#: they come first, so the setting needs at least one more. The generator reads the count here.
SYNTHETIC_SPECIAL_JOBS = 9


synthetic_job_count = int_at_least(SYNTHETIC_SPECIAL_JOBS + 1)

#: The embedded generator's cause mixes (the generator's CAUSE_MIXES gives each its skew share):
#: 'hound' is Hound's published mix, the embedded trace; 'reexecution_fit' the variant whose skew share
#: is fitted to the real re-executions (docs/SYNTHETIC_TRACE.md, "Cause mixes").
SYNTHETIC_CAUSE_MIXES = ("hound", "reexecution_fit")


def positive_number(v) -> str | None:
    return None if _number(v) and v > 0 else "a number > 0"


def nonempty(v) -> str | None:
    return None if isinstance(v, str) and v.strip() else "a non-empty string"


def any_string(v) -> str | None:
    return None if isinstance(v, str) else "a string"


# --------------------------------------------------------------------------- NURD_TRACE_PARTS
# The grammar of the setting lives with it (the downloader, stragglers/traces/google_parts.py, uses it).
#: The scheduler's event tables: what an events-only evaluation of the whole month needs
#: (NURD_TRACE_PARTS=events; about 1.2 GB of the trace's 41 GB, docs/TRACES.md).
EVENT_TABLES: tuple[str, ...] = ("job_events", "task_events", "machine_events")
_RANGE_RE = re.compile(r"^(\d+)-(\d+)$")


def _parts_error(value) -> ValueError:
    return ValueError(
        f"NURD_TRACE_PARTS must be 'all', 'events' (every part of {', '.join(EVENT_TABLES)}), a positive "
        f"integer N (parts 0..N-1 of every table), or "
        f"per-table selections like 'task_events=0-13,job_events=all' (each value 'all', N or A-B; a bare "
        f"N or 'all' among them applies to the tables not named), got {value!r}")


def _parse_one_spec(text: str, value) -> int | str | tuple[int, ...]:
    text = text.strip().lower()
    if text == "all":
        return "all"
    m = _RANGE_RE.match(text)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        if a > b:
            raise _parts_error(value)
        return tuple(range(a, b + 1))
    try:
        n = int(text)
    except ValueError:
        raise _parts_error(value) from None
    if n < 1:
        raise _parts_error(value)
    return n


def parse_parts(value: str | int) -> int | str | dict:
    """Validate a ``NURD_TRACE_PARTS`` value.

    ``"all"`` or a positive integer N apply to every table (parts 0..N-1).
    ``"events"`` is every part of the event tables (``EVENT_TABLES``) and nothing else.
    Per-table selections ``table=SPEC`` separated by commas (SPEC ``all``, N or
    an inclusive range ``A-B``) give a dict {table: spec}; a bare ``N`` / ``all``
    item among them is the spec of the tables not named (key ``"*"``); without
    one, tables not named are not fetched.
    """
    if isinstance(value, bool):
        raise _parts_error(value)
    if isinstance(value, dict):   # already parsed
        return value
    if isinstance(value, int):
        if value < 1:
            raise _parts_error(value)
        return value
    text = str(value).strip()
    if text.lower() == "events":
        return {table: "all" for table in EVENT_TABLES}
    if "=" not in text:
        spec = _parse_one_spec(text, value)
        if isinstance(spec, tuple):
            raise _parts_error(value)   # a bare range names no table
        return spec
    out: dict = {}
    for item in text.split(","):
        table, eq, spec = item.partition("=")
        table = table.strip()
        key = table if eq else "*"
        spec_text = spec if eq else table
        if (eq and not re.fullmatch(r"[a-z_]+", table)) or key in out:
            raise _parts_error(value)
        parsed = _parse_one_spec(spec_text, value)
        if key == "*" and isinstance(parsed, tuple):
            raise _parts_error(value)
        out[key] = parsed
    return out


def parts_spec(v) -> str | None:
    """Google parts: "all", "events", a positive integer N (parts 0..N-1 of every table), or per-table
    selections such as "task_events=0-13,job_events=all" (``parse_parts``)."""
    try:
        parse_parts(v)
    except ValueError:
        return ("'all', 'events' or a positive integer (or per-table selections such as "
                "'task_events=0-13,job_events=all')")
    return None


def _closest_parts(v) -> str | None:
    """A keyword near the value ('event' -> 'events'), else 1 for a count below 1."""
    text = str(v).strip()
    if "=" in text:
        return None
    if re.fullmatch(r"-?\d+", text):
        return "1"
    return closest_word(text, ("all", "events"), cutoff=0.5)   # a value far from both is a malformed list


_with_closest(parts_spec, _closest_parts)


_MEMORY = re.compile(r"^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.I)


def dask_address(v) -> str | None:
    return None if isinstance(v, str) and (v == "" or "://" in v) else "'' or a scheduler address such as tcp://127.0.0.1:8786"


def memory_size(v) -> str | None:
    return None if isinstance(v, str) and _MEMORY.match(v) else "a size such as '4GB' or '512MiB'"


def cron(v) -> str | None:
    return None if isinstance(v, str) and len(v.split()) == 5 else "a 5-field cron expression such as '0 4 * * *'"


def setting(default, *, check: Check, env: str | None = None, doc: str = "", run: bool = True):
    """A settings field: its default (written here only), check, variable and description.
    ``run=False``: read when the definitions load (schedules, sensors), not a run setting."""
    return field(default=default, metadata={"check": check, "env": env, "doc": doc, "run": run})


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Settings:
    # where and which trace
    data_dir: str = setting("data", env="NURD_DATA_DIR", check=nonempty,
                            doc="downloads, the warehouse (warehouse.duckdb) and the reports live here")
    trace: str = setting("synthetic", env="NURD_TRACE", check=one_of(*TRACES), doc="the trace to run on")
    trace_url: str = setting("", env="NURD_TRACE_URL", check=any_string,
                             doc="the trace's source; '' = its public location")
    trace_parts: str = setting("2", env="NURD_TRACE_PARTS", check=parts_spec,
                               doc="Google parts: a count N (parts 0..N-1 of every table), 'all', 'events' (every "
                                   "part of job_events, task_events and machine_events), or per "
                                   "table, e.g. 'task_events=0-13,job_events=all' (tables not named are not "
                                   "fetched unless a bare N or 'all' is given)")
    download_workers: int = setting(4, check=int_at_least(1), doc="parallel downloads")
    synthetic_seed: int = setting(2011, check=int_at_least(0), doc="seed of the embedded trace generator")
    synthetic_jobs: int = setting(48, env="NURD_SYNTHETIC_JOBS", check=synthetic_job_count,
                                  doc="jobs of the embedded trace")
    synthetic_parts: int = setting(8, check=int_at_least(1), doc="parts per table of the embedded trace")
    synthetic_cause_mix: str = setting("hound", env="NURD_SYNTHETIC_CAUSE_MIX", check=one_of(*SYNTHETIC_CAUSE_MIXES),
                                       doc="the embedded trace's cause mix: 'hound' (Hound's published mix) or "
                                           "'reexecution_fit' (skew fitted to the real re-executions, a variant)")
    on_bad_rows: str = setting("fail", env="NURD_ON_BAD_ROWS", check=one_of(*ON_BAD_ROWS),
                               doc="a malformed trace row: 'fail' (stop, naming file and line) or "
                                   "'quarantine' (set aside in table quarantine, counted)")
    empty_parts: str = setting("fail", env="NURD_EMPTY_PARTS", check=one_of(*EMPTY_PARTS),
                               doc="a raw part with no rows while other parts of its table have rows: 'fail' "
                                   "(stop, naming the part) or 'accept' (counted and reported); the embedded "
                                   "trace always accepts (its generator writes parts with no rows on purpose)")
    # selection and features (docs/PROTOCOL.md)
    production_rule: str = setting("max_class", check=one_of("max_class", "priority"),
                                   doc="production job: max scheduling class >= 1, or a task priority 9-11")
    min_tasks: int = setting(100, check=int_at_least(2), doc="jobs with fewer tasks are not selected")
    quantile: float = setting(0.9, check=number_in(0.5, 1, hi_open=True),
                              doc="straggler threshold: the job's latency quantile")
    initial_fraction: float = setting(0.04, check=number_in(0, 1, lo_open=True, hi_open=True),
                                      doc="t0 = time by which this share of the tasks finished")
    checkpoint_grid: str = setting("capped", env="NURD_CHECKPOINT_GRID", check=one_of(*CHECKPOINT_GRIDS),
                                   doc="Google checkpoints between t0 and tau: 'capped' = every checkpoint_step_s, "
                                       "but at least checkpoint_steps of them (short jobs get a finer step); "
                                       "'fixed' = every checkpoint_step_s (jobs with tau - t0 <= the step get "
                                       "none); 'equal' = checkpoint_steps equal steps")
    checkpoint_step_s: int = setting(300, check=int_at_least(1),
                                     doc="Google: seconds between checkpoints (one task_usage window)")
    checkpoint_steps: int = setting(10, check=int_at_least(1),
                                    doc="Google: checkpoints between t0 and tau, at least ('capped') or exactly "
                                        "('equal')")
    alibaba_steps: int = setting(50, check=int_at_least(1), doc="Alibaba: equal steps between t0 and tau")
    feature_mode: str = setting("observed", env="NURD_FEATURE_MODE", check=one_of("observed", "reference"),
                                doc="'observed': only what was visible at the checkpoint; 'reference': the "
                                    "authors' leaky construction")
    feature_set: str = setting("auto", env="NURD_FEATURE_SET", check=one_of(*FEATURE_SETS),
                               doc="the features every method sees: 'usage' = the paper's 15 (task_usage), "
                                   "'events' = scheduler-visible features from events (docs/EVENT_FEATURES.md), "
                                   "'all' = both; 'auto' = 'usage' where the trace has task_usage, 'events' "
                                   "where it has none (a partial mirror)")
    min_cpu_rate_for_cpi: float = setting(1e-4, check=positive_number,
                                          doc="CPI/MAI of usage windows with less CPU are missing")
    max_cpi: float = setting(100.0, check=positive_number, doc="CPI above this is missing")
    max_mai: float = setting(10.0, check=positive_number, doc="MAI above this is missing")
    # the operator's decision clock (sql/operator_checkpoints.sql, stragglers/prediction/clock.py)
    decision_clock: str = setting("online", env="NURD_DECISION_CLOCK", check=one_of(*DECISION_CLOCKS),
                                  doc="when the operator's protocol (threshold='online') decides: 'online' = "
                                      "each time a further clock_finished_percent of the job's tasks have "
                                      "finished, and every clock_interval_s while tasks run, until the last "
                                      "ends whatever `horizon` (stopping at tau would need tau), on features "
                                      "as of each decision (operator_checkpoint_features); "
                                      "'legacy_grid' = the paper's grid cut from the true tau, then steps to the "
                                      "job's end on features repeated from the last row before tau (it reads "
                                      "the future: kept to measure what that did)")
    clock_finished_percent: int = setting(10, check=int_at_least(1),
                                          doc="online clock: a decision each time a further this percent of "
                                              "the job's tasks (known at submission) have finished (10: about "
                                              "the paper's 10 decisions between t0 and tau)")
    clock_interval_s: int = setting(300, check=int_at_least(1),
                                    doc="online clock: a decision every this many seconds of task time while "
                                        "tasks run (one task_usage window), from t0")
    clock_doubling_after: int = setting(10, check=int_at_least(1),
                                        doc="online clock: the interval doubles after every this many timed "
                                            "decisions (bounds the decisions of a long tail by a logarithm of "
                                            "its length, without knowing when the job will end)")
    # trace_realism (stragglers/warehouse/realism.py)
    realism_against: str = setting("google_2011", env="NURD_REALISM_AGAINST", check=one_of(*TRACES),
                                   doc="trace_realism compares the configured trace with this one")
    usage_sample: str = setting("", env="NURD_USAGE_SAMPLE", check=any_string,
                                doc="usage rows (CSV with a header row) standing for the usage of a trace "
                                    "without task_usage in trace_realism, e.g. the real excerpt's sample")
    # online evaluation
    seed: int = setting(0, env="NURD_SEED", check=int_at_least(0), doc="seed of the evaluation and bootstrap")
    regressor: str = setting("xgboost", check=one_of("xgboost", "sklearn"),
                             doc="NURD's regressor ('sklearn' = GradientBoostingRegressor, the authors')")
    alpha: float = setting(0.5, check=number_in(0, 1, hi_open=True),
                           doc="NURD calibration (the paper: 0.5; the authors' released code: 0)")
    eps: float = setting(0.05, check=number_in(0, 1, lo_open=True), doc="NURD minimum weight")
    workers: int = setting(0, env="NURD_WORKERS", check=int_at_least(0),
                           doc="evaluation worker processes; 0 = one per core")
    min_finished: int = setting(20, check=int_at_least(2),
                                doc="jobs with fewer finished tasks are skipped (counted)")
    n_boot: int = setting(1000, check=int_at_least(1), doc="bootstrap resamples over jobs")
    # the authors' protocol (stragglers/prediction/protocol.py; docs/EVALUATION.md cites the line of
    # their released code each setting mirrors); each default is this pipeline's protocol
    protocol: str = setting("ours", env="NURD_PROTOCOL", check=one_of("ours", "authors", "operator"),
                            doc="'authors' sets every protocol setting below, alpha, regressor and feature_mode "
                                "to the authors' released code's values; 'operator' sets threshold='online', "
                                "horizon='end', intervention='speculate' (what a scheduler has and does); "
                                "'ours' leaves each as set")
    latency_normalization: str = setting("none", check=one_of(*PROTOCOL_CHOICES["latency_normalization"]),
                                         doc="'job_minmax': NURD thresholds (y_hat - y_min)/w >= tau - y_min "
                                             "(latency min-max normalized per job)")
    propensity_max_iter: int = setting(1000, check=int_at_least(1),
                                       doc="iterations of NURD's propensity LogisticRegression (authors: 100)")
    quantiles: str = setting("interpolated", check=one_of(*PROTOCOL_CHOICES["quantiles"]),
                             doc="'sorted_index': tau and the initial training cut as sorted[int(q n)]")
    test_set: str = setting("running_at_t0", check=one_of(*PROTOCOL_CHOICES["test_set"]),
                            doc="'length_filter': the authors' series-length filter of the evaluated tasks")
    horizon: str = setting("tau", check=one_of(*PROTOCOL_CHOICES["horizon"]),
                           doc="'longest_straggler': the replay goes on past tau until the longest straggler ends; "
                               "'end': until the job's last task ends (a flag before the task ends counts)")
    threshold: str = setting("oracle", check=one_of(*PROTOCOL_CHOICES["threshold"]),
                             doc="what a method is given as the straggler threshold: 'oracle' = the job's true "
                                 "latency quantile tau (known once the job is over); 'online' = tau_hat(t), "
                                 "the Kaplan-Meier quantile of the latencies known at t (running tasks "
                                 "censored), log-normal extrapolation where it is undefined (docs/EVALUATION.md)")
    intervention: str = setting("relaunch", check=one_of(*PROTOCOL_CHOICES["intervention"]),
                                doc="what a flag does in the completion-time simulation: 'relaunch' = kill and "
                                    "restart (the paper's Algorithms 2-3); 'speculate' = a copy runs beside the "
                                    "original, the first to finish wins, both cost machine time")
    copy_keeps: float = setting(0.0, env="NURD_COPY_KEEPS", check=number_in(0, 1),
                                doc="the share of its original's relative log-latency a speculative copy keeps: "
                                    "y' = y^k d^(1-k), d the fresh draw from the job's latencies (0 = today's "
                                    "model; 1 = a copy as slow as its original); the operator's completion "
                                    "tables only (docs/EVALUATION.md, 'What a copy buys')")
    cause_aware_copies: str = setting("off", env="NURD_CAUSE_AWARE_COPIES", check=one_of("off", "on"),
                                      doc="generated traces (their truth is known): 'on' = a speculative copy of a "
                                          "task slowed by its own work (data, computation or I/O skew) does the "
                                          "original's work on a typical machine, any other copy draws as today; "
                                          "the operator's completion tables only")
    latency: str = setting("lifecycle", check=one_of(*PROTOCOL_CHOICES["latency"]),
                           doc="'usage_windows': a task's latency is the sum of its usage-window durations")
    baseline_params: str = setting("ours", check=one_of(*PROTOCOL_CHOICES["baseline_params"]),
                                   doc="'authors': the baselines' hyperparameters of the released code")
    # the survival family (issue 27; stragglers/prediction/history.py)
    cost_lambda: float = setting(1.0, env="NURD_COST_LAMBDA", check=number_in(0, 1e6),
                                 doc="the price of machine time for the survival family's cost-aware threshold: "
                                     "each job's threshold maximizes, over the jobs that ended before it, the JCT "
                                     "reduction minus this x the extra machine time (both as shares of the job's)")
    history_min_jobs: int = setting(5, check=int_at_least(1),
                                    doc="a job learns from earlier jobs (prior, cost-aware threshold) once at least "
                                        "this many have ended before its first checkpoint; before, the fallback")
    ablation_max_jobs: int = setting(0, check=int_at_least(0),
                                     doc="protocol_ablation and nurd_sensitivity replay the first N jobs; 0 = all")
    # where the replays run (stragglers/prediction/engine.py)
    dask_address: str = setting("", env="NURD_DASK_ADDRESS", check=dask_address,
                                doc="a Dask scheduler to replay jobs on, e.g. tcp://host:8786; '' = local "
                                    "processes (workers)")
    exchange_dir: str = setting("", env="NURD_EXCHANGE_DIR", check=any_string,
                                doc="where job batches are exported as Parquet for the workers (a path every "
                                    "Dask worker can read); '' = <data_dir>/exchange")
    batch_jobs: int = setting(200, env="NURD_BATCH_JOBS", check=int_at_least(1),
                              doc="jobs per batch streamed from the warehouse (memory grows with it, not "
                                  "with the number of jobs)")
    # Hound cause diagnosis (stragglers/diagnosis, docs/HOUND.md)
    hound_min_tasks: int = setting(20, env="NURD_HOUND_MIN_TASKS", check=int_at_least(5),
                                   doc="Hound: jobs with fewer finished tasks are not diagnosed (Hound Section 4.1)")
    hound_replicas: int = setting(20, check=int_at_least(1),
                                  doc="Hound PR: bootstrap replicas of Bagging Augmented ElasticNet (Algorithm 1)")
    hound_adaboost_rounds: int = setting(25, check=int_at_least(1),
                                         doc="Hound CA: AdaBoost iterations of the propensity score (Algorithm 2)")
    hound_words: int = setting(500, check=int_at_least(10),
                               doc="Hound meta learning: words drawn per job (Algorithm 3)")
    # node ranking, Ouyang et al. (stragglers/nodes, docs/NODES.md)
    node_min_tasks: int = setting(10, env="NURD_NODE_MIN_TASKS", check=int_at_least(3),
                                  doc="node ranking: machines with fewer finished tasks are not ranked (counted); "
                                      "Hound's hound_with_nodes: machines with fewer tasks of other jobs are "
                                      "not judged")
    node_fit_sample: int = setting(132, check=int_at_least(0),
                                   doc="node ranking: nodes whose 9 distributions are fitted, stratified by server "
                                       "type (the paper's sample of 132); 0 = every ranked node")
    node_interval: str = setting("mean", check=one_of("mean", "fitted"),
                                 doc="node ranking: P-cores interval, 'mean' = 95% CI of the node's mean z, "
                                     "'fitted' = central 95% of its fitted 3-parameter log-logistic")
    # failure prediction and proactive cloning, El-Sayed et al. (stragglers/failures, docs/FAILURES.md)
    failure_trees: int = setting(50, check=int_at_least(1), doc="failure prediction: random-forest trees")
    failure_max_train_rows: int = setting(50_000, check=int_at_least(100),
                                          doc="failure prediction: training rows per forest (a seeded sample "
                                              "beyond, reported)")
    clone_retries: int = setting(4, check=int_at_least(0), doc="proactive cloning: retry cap R (Algorithm 1)")
    clones: int = setting(1, check=int_at_least(1), doc="proactive cloning: clones C per prediction (Algorithm 1)")
    clone_tasks: int = setting(25_000, check=int_at_least(10),
                               doc="proactive cloning: tasks in each of the training and evaluation sets")
    # DuckDB (out of core)
    duckdb_memory_limit: str = setting("4GB", env="NURD_DUCKDB_MEMORY_LIMIT", check=memory_size,
                                       doc="DuckDB spills to disk past this")
    duckdb_threads: int = setting(0, check=int_at_least(0), doc="DuckDB threads; 0 = DuckDB's default")
    duckdb_slice_rows: int = setting(8_000_000, env="NURD_DUCKDB_SLICE_ROWS", check=int_at_least(1000),
                                     doc="a step over the events whose SQL has a ${job_slice} condition runs in "
                                         "slices of job ids of about this many task_events rows each (one "
                                         "transaction; the rows are the same), so its memory stays within "
                                         "duckdb_memory_limit whatever the trace's length; the default fits 4GB")
    # read when the definitions load
    automation: str = setting("on", env="NURD_AUTOMATION", check=one_of("on", "off"), run=False,
                              doc="'off' starts the schedule and the automation sensor stopped")
    observe_cron: str = setting("0 4 * * *", env="NURD_OBSERVE_CRON", check=cron, run=False,
                                doc="when the trace source is observed")

    def __post_init__(self) -> None:
        validate(self)
        if self.feature_set != "auto":
            try:
                FORMATS[self.trace].feature_set(self.feature_set)
            except ValueError as err:
                raise SettingError(str(err)) from None

    # ---- derived values
    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    @property
    def warehouse_path(self) -> Path:
        return Path(self.data_dir) / "warehouse.duckdb"

    @property
    def parts(self) -> int | str | dict:
        return parse_parts(self.trace_parts)

    @property
    def resolved_workers(self) -> int:
        return self.workers or (os.cpu_count() or 1)

    def engine(self) -> EngineSettings:
        return EngineSettings(dask_address=self.dask_address, batch_jobs=self.batch_jobs,
                              exchange_dir=self.exchange_dir or str(Path(self.data_dir) / "exchange"))

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides) -> Settings:
        """Defaults, then the ``NURD_...`` variables that are set (non-empty), then ``overrides``."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            var = f.metadata["env"]
            if var and environ.get(var, "") != "":
                values[f.name] = parse_env(f.name, environ[var])
        return cls(**(values | overrides))


# --------------------------------------------------------------------------- helpers
def _types() -> dict[str, type]:
    hints = typing.get_type_hints(Settings)
    return {name: hints[name] for name in hints}


def spec(name: str):
    """The dataclass field of setting ``name`` (default, env, check, doc in its metadata)."""
    for f in fields(Settings):
        if f.name == name:
            return f
    raise KeyError(f"unknown setting {name!r}")


def default(name: str):
    """The default of setting ``name``: the domain dataclasses use it instead of repeating it."""
    d = spec(name).default
    assert d is not MISSING
    return d


def label(name: str) -> str:
    """How an error names the setting: its variable when it has one."""
    var = spec(name).metadata["env"]
    return f"{name} ({var})" if var else name


def parse_env(name: str, raw: str):
    """An environment value converted to the setting's type, or a SettingError naming the variable."""
    kind = _types()[name]
    var = spec(name).metadata["env"]
    try:
        return kind(raw.strip()) if kind in (int, float) else raw
    except ValueError:
        near = None
        if kind is int:   # '5.0' or '1e3': the integer it reads as, checked against the bounds
            try:
                near = spec(name).metadata["check"].closest(round(float(raw)))
            except (ValueError, OverflowError, AttributeError):
                near = None
        raise SettingError(f"setting {var}={raw!r} is invalid: expected {'an integer' if kind is int else 'a number'}"
                           f"{did_you_mean(near)} ({spec(name).metadata['doc']})") from None


def did_you_mean(near) -> str:
    return "" if near is None else f"; did you mean {near!r}?"


def validate(obj) -> None:
    """Check every field of ``obj`` (Settings or a subset) with the setting's check, then the
    rules between settings; the first failure raises SettingError naming the setting."""
    types = _types()
    for f in fields(obj):
        value = getattr(obj, f.name)
        if types.get(f.name) is float and isinstance(value, int) and not isinstance(value, bool):
            object.__setattr__(obj, f.name, float(value))
            value = float(value)
        expected = spec(f.name).metadata["check"](value)
        if expected:
            var = spec(f.name).metadata["env"]
            shown = f"{var}={value!r}" if var else f"{f.name}={value!r}"
            check = spec(f.name).metadata["check"]
            near = check.closest(value) if hasattr(check, "closest") else None
            raise SettingError(f"setting {shown} is invalid: expected {expected}{did_you_mean(near)} "
                               f"({spec(f.name).metadata['doc']})")
    names = {f.name for f in fields(obj)}
    if {"initial_fraction", "quantile"} <= names and not obj.initial_fraction < obj.quantile:
        raise SettingError(f"setting initial_fraction={obj.initial_fraction!r} is invalid: expected a number "
                           f"below quantile={obj.quantile!r} (t0 must come before the straggler threshold)")


# --------------------------------------------------------------------------- typed subsets
@dataclass(frozen=True)
class SelectionSettings:
    """What the warehouse's selection and features depend on (recorded with every table)."""
    trace: str = default("trace")
    production_rule: str = default("production_rule")
    min_tasks: int = default("min_tasks")
    quantile: float = default("quantile")
    initial_fraction: float = default("initial_fraction")
    checkpoint_grid: str = default("checkpoint_grid")
    checkpoint_step_s: int = default("checkpoint_step_s")
    checkpoint_steps: int = default("checkpoint_steps")
    alibaba_steps: int = default("alibaba_steps")
    clock_finished_percent: int = default("clock_finished_percent")
    clock_interval_s: int = default("clock_interval_s")
    clock_doubling_after: int = default("clock_doubling_after")
    feature_mode: str = default("feature_mode")
    min_cpu_rate_for_cpi: float = default("min_cpu_rate_for_cpi")
    max_cpi: float = default("max_cpi")
    max_mai: float = default("max_mai")
    on_bad_rows: str = default("on_bad_rows")
    empty_parts: str = default("empty_parts")

    def __post_init__(self) -> None:
        validate(self)
        modes = self.format.feature_modes
        if self.feature_mode not in modes:
            raise SettingError(f"setting feature_mode={self.feature_mode!r} is invalid: expected one of {modes} "
                               f"for trace {self.trace} (its features are {', '.join(self.format.features)})")

    @property
    def format(self) -> TraceFormat:
        return FORMATS[self.trace]

    @property
    def is_google_format(self) -> bool:
        return self.format.is_google_layout

    def as_dict(self) -> dict:
        return asdict(self)

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
        return asdict(self) | {"step_us": self.step_us_sql()}


@dataclass(frozen=True)
class EvaluationSettings:
    """What the online evaluation depends on (recorded in evaluation_runs)."""
    seed: int = default("seed")
    quantile: float = default("quantile")
    alpha: float = default("alpha")
    eps: float = default("eps")
    regressor: str = default("regressor")
    workers: int = default("workers")      # 0 = one per core, resolved here
    min_finished: int = default("min_finished")
    n_boot: int = default("n_boot")
    initial_fraction: float = default("initial_fraction")   # the initial training set
    # the authors' protocol, one setting per difference (stragglers/prediction/protocol.py)
    latency_normalization: str = default("latency_normalization")
    propensity_max_iter: int = default("propensity_max_iter")
    quantiles: str = default("quantiles")
    test_set: str = default("test_set")
    horizon: str = default("horizon")
    threshold: str = default("threshold")
    decision_clock: str = default("decision_clock")
    clock_interval_s: int = default("clock_interval_s")
    clock_doubling_after: int = default("clock_doubling_after")
    intervention: str = default("intervention")
    latency: str = default("latency")
    baseline_params: str = default("baseline_params")
    feature_set: str = default("feature_set")
    cost_lambda: float = default("cost_lambda")
    history_min_jobs: int = default("history_min_jobs")

    def __post_init__(self) -> None:
        validate(self)
        if self.workers == 0:
            object.__setattr__(self, "workers", os.cpu_count() or 1)

    def as_dict(self) -> dict:
        """The settings the evaluation depends on: the operator's clock only under threshold='online'
        (the paper's view is recorded, and kept current, without them)."""
        clock = ("decision_clock", "clock_interval_s", "clock_doubling_after")
        return {f.name: getattr(self, f.name) for f in fields(self)
                if self.threshold == "online" or f.name not in clock}


@dataclass(frozen=True)
class EngineSettings:
    """Where the replays run (not recorded with the results: they do not depend on it)."""
    dask_address: str = default("dask_address")
    exchange_dir: str = default("exchange_dir")   # '' = a temporary directory (local runs only)
    batch_jobs: int = default("batch_jobs")

    def __post_init__(self) -> None:
        validate(self)


def describe() -> str:
    """A Markdown table of every setting: variable, default, meaning (for the README)."""
    rows = ["| setting | variable | default | meaning |", "|---|---|---|---|"]
    for f in fields(Settings):
        rows.append(f"| `{f.name}` | {('`' + f.metadata['env'] + '`') if f.metadata['env'] else ''} | "
                    f"`{f.default!r}` | {f.metadata['doc']} |")
    return "\n".join(rows)
