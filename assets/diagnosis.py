"""Hound (stragglers/diagnosis): cause diagnosis per job across the trace, checked
against the embedded trace's planted causes, and NURD's flagged tasks explained.
Thin glue: the domain code is Dagster-free; every table has a blocking GX check."""


import time
from typing import NamedTuple

import dagster as dg
import pandas as pd
from dagster_duckdb import DuckDBResource

import stragglers.diagnosis.checks  # noqa: F401  (registers the Hound GX suites)
from stragglers.diagnosis import explain, machine_evidence
from stragglers.diagnosis import run as hound
from stragglers.diagnosis import truth as hound_truth
from stragglers.reports.sections.hound import build_hound_report
from stragglers.traces.fetch import truth_dir
from stragglers.warehouse import freshness, runner, storage
from .resources import PipelineSettings

from .checks import table_check
from .common import automated_asset, connected, google_format_only, md_image_file, md_table

EXPLAINED_METHOD = "nurd"      # the method whose flagged tasks get explanations
UI_SAMPLE = 25                 # flagged tasks shown in the asset's metadata
# Hound reads the Google-format usage metrics of its Table 2
HOUND_NEEDS = "Hound needs the Google-format usage metrics (Table 2): I/O, CPI and scheduling"


def write_rows(con, table: str, df: pd.DataFrame, trace: str, settings: dict | None = None) -> int:
    """Replace ``trace``'s rows of ``table`` by ``df`` in one transaction (nothing partial is visible),
    recording the settings they were built with (table_settings)."""
    df = df.copy()
    df.insert(0, "trace", trace)
    con.register("_hound_rows", df)
    try:
        return runner.replace_trace_rows(con, table, "SELECT * FROM _hound_rows", trace, settings=settings)
    finally:
        con.unregister("_hound_rows")


def _read(con, sql: str, trace: str) -> pd.DataFrame:
    return con.execute(sql, [trace]).df()


def _node_answers(con, trace: str, causes: pd.DataFrame, jobs: list, hs) -> tuple[dict, dict]:
    """``hound_with_nodes`` (stragglers/diagnosis/machine_evidence.py) from node_task_durations, built by
    node_ranking: ({name: answer rows} for ``hound_truth.validate``, metadata). Without rows for the
    trace, no answer and a note: Hound is scored without it."""
    name = machine_evidence.METHOD
    if not storage.table_exists(con, "node_task_durations"):
        return {}, {"node_evidence": f"table node_task_durations does not exist: materialize node_ranking; {name} "
                                     f"is not scored"}
    durations = _read(con, f"SELECT {', '.join(machine_evidence.DURATION_COLUMNS)} FROM node_task_durations "
                           f"WHERE trace = ?", trace)
    if durations.empty:
        return {}, {"node_evidence": f"node_task_durations has no rows for {trace}: materialize node_ranking; "
                                     f"{name} is not scored"}
    inputs = _read(con, "SELECT job_id, task_id, latency_s FROM hound_inputs WHERE trace = ?", trace)
    answer, shares = machine_evidence.hound_with_nodes(causes, inputs, durations, jobs, hs)
    lp = int((shares.node_share > machine_evidence.MAJORITY).sum())
    return {name: answer}, {
        "node_evidence": f"{name}: limited processor alone in {lp} of {len(jobs)} jobs (node share > 1/2), "
                         f"Hound's mixture elsewhere; {int(shares.known.sum())} of {int(shares.stragglers.sum())} "
                         f"stragglers have a machine in node_task_durations; machines judged from >= "
                         f"{hs.node_min_tasks} tasks of other jobs",
        f"{name}_jobs_limited_processor": lp,
        "node_shares": md_table(shares.reset_index(), max_rows=60)}


def _truth_inputs(con, trace: str) -> pd.DataFrame:
    """What the embedded trace's counterfactual truth (``hound_truth.cause_added_s``) reads of hound_inputs."""
    return _read(con, "SELECT job_id, task_id, latency_s, sched_delay FROM hound_inputs WHERE trace = ?", trace)


class _Scored(NamedTuple):
    """Hound (and its answers beside it) against the embedded trace's truth."""
    truth_jobs: pd.DataFrame
    truth_tasks: pd.DataFrame
    added: pd.DataFrame          # per task, the seconds each cause added (hound_truth.cause_added_s)
    stragglers: pd.DataFrame     # the stragglers' mixture per job (hound_truth.straggler_mixtures)
    answers: dict                # name -> answer rows beside Hound's (_node_answers)
    node_meta: dict
    per_job: pd.DataFrame        # hound_truth.validate's rows (table hound_validation)
    summary: pd.DataFrame


def _scored(con, nurd: PipelineSettings, s, hs, causes: pd.DataFrame, jobs: list, inputs: pd.DataFrame) -> _Scored:
    """The one scoring of ``causes`` against the truth that hound_validation records and hound_report shows
    (``inputs``: hound_inputs' rows, at least those of ``_truth_inputs``)."""
    truth_jobs, truth_tasks = hound_truth.load_truth(truth_dir(nurd.data_dir, s.trace))
    added = hound_truth.cause_added_s(truth_tasks, truth_jobs, inputs)
    stragglers = hound_truth.straggler_mixtures(added)
    answers, node_meta = _node_answers(con, s.trace, causes, jobs, hs)
    per_job, summary = hound_truth.validate(causes, truth_jobs, jobs, stragglers, answers)
    return _Scored(truth_jobs, truth_tasks, added, stragglers, answers, node_meta, per_job, summary)


@automated_asset(deps=["tasks"], group_name="diagnosis", kinds={"python", "duckdb"})
@google_format_only(HOUND_NEEDS)
def hound_profiles(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                   duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Hound's base learners (Section 3.1): per job with >= hound_min_tasks finished tasks, the causality profiles of
    PR (Bagging Augmented ElasticNet), DP (signed Schweizer-Wolff) and CA (AdaBoost-IPW Rubin causal model) over
    the Table 2 metrics of sql/hound_inputs.sql. Tables hound_inputs and hound_profiles (job x learner x metric)."""
    s, hs = nurd.selection(), nurd.hound()
    started = time.perf_counter()
    with connected(nurd, duckdb) as con:
        n_inputs = runner.build_table(con, "hound_inputs", s, hound_min_tasks=hs.min_tasks)
        inputs = _read(con, "SELECT * FROM hound_inputs WHERE trace = ?", s.trace)
    n_jobs = inputs.job_id.nunique()
    context.log.info(f"Hound: profiling {n_jobs} jobs ({n_inputs} tasks) with {hs.workers} workers")
    profiles = hound.profile_jobs(inputs, hs, log=context.log.info)
    with connected(nurd, duckdb) as con:
        n = write_rows(con, "hound_profiles", profiles, s.trace, settings=hs.as_dict())
    abs_sum = profiles.assign(a=profiles.weight.abs()).groupby(["job_id", "learner"]).a.sum()
    empty = abs_sum[abs_sum == 0].reset_index().groupby("learner").size().to_dict()
    imputed = (profiles[profiles.learner == "PR"].groupby("metric").n_imputed.sum())
    mean_abs = profiles.assign(a=profiles.weight.abs()).pivot_table(index="metric", columns="learner", values="a")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": n, "jobs": int(n_jobs), "tasks": int(n_inputs), "hound_min_tasks": hs.min_tasks,
        "empty_profiles": str(empty or "none"),
        "imputed_values": md_table(imputed[imputed > 0].rename("tasks imputed with the job median").reset_index()),
        "mean_abs_weight": md_table(mean_abs.reset_index()), "seconds": round(time.perf_counter() - started, 1)})


@automated_asset(deps=["hound_profiles"], group_name="diagnosis", kinds={"python", "duckdb"})
@google_format_only(HOUND_NEEDS)
def hound_topics(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                 duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Hound's Table 4: LDA topics per learner (Algorithm 3) and the ensemble topics that at least two learners agree
    on (Algorithm 4, HAC), each named after Table 4's causes or left as its keywords. Tables hound_topics and
    hound_topic_mixtures (job x ensemble topic)."""
    s, hs = nurd.selection(), nurd.hound()
    with connected(nurd, duckdb) as con:
        profiles = _read(con, "SELECT * EXCLUDE (trace) FROM hound_profiles WHERE trace = ?", s.trace)
    d = hound.diagnose(profiles, hs)
    with connected(nurd, duckdb) as con:
        n = write_rows(con, "hound_topics", d.topics, s.trace, settings=hs.as_dict())
        write_rows(con, "hound_topic_mixtures", d.mixtures, s.trace, settings=hs.as_dict())
    ens = d.topics[d.topics.learner == "ENS"]
    return dg.MaterializeResult(metadata={
        "dagster/row_count": n, "ensemble_topics": len(ens),
        "topics_per_learner": str({k: len(m.beta) for k, m in d.models.items()}),
        "lda_k_tried": str({k: m.k_tried for k, m in d.models.items()}),
        "hac_clusters": d.ensemble.n_clusters, "dropped_topics": len(d.ensemble.dropped),
        "table4": md_table(ens.drop(columns=["learner"])),
        "initial_topics": md_table(d.topics[d.topics.learner != "ENS"], max_rows=100)})


@automated_asset(deps=["hound_topics"], group_name="diagnosis", kinds={"python", "duckdb"})
@google_format_only(HOUND_NEEDS)
def hound_job_causes(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Hound's Table 5: each job's mixture of named causes (ensemble topics of the same name summed; unnamed topics
    keep their keywords, named = false). Table hound_job_causes."""
    s = nurd.selection()
    with connected(nurd, duckdb) as con:
        mixtures = _read(con, "SELECT job_id, topic, weight FROM hound_topic_mixtures WHERE trace = ?", s.trace)
        topics = _read(con, "SELECT * EXCLUDE (trace) FROM hound_topics WHERE trace = ?", s.trace)
        n_jobs = con.execute("SELECT count(DISTINCT job_id) FROM hound_profiles WHERE trace = ?",
                             [s.trace]).fetchone()[0]
        causes = hound.job_cause_rows(mixtures, topics)
        n = write_rows(con, "hound_job_causes", causes, s.trace)
    jobs = sorted(causes.job_id.unique())
    return dg.MaterializeResult(metadata={
        "dagster/row_count": n, "jobs_with_causes": len(jobs), "jobs_without_cause": int(n_jobs - len(jobs)),
        "table5_sample": md_table(causes.head(30)),
        "table7": md_table(hound_truth.coverage_table(causes, None, jobs))})


@automated_asset(deps=["hound_job_causes", "node_ranking"],
                 group_name="diagnosis", kinds={"python", "duckdb"})
def hound_validation(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Hound against the embedded trace's causes (ground truth under $NURD_DATA_DIR/truth/synthetic/): per job the
    planted mixture, the effective one (planted causes plus background evictions and waits), the stragglers' one
    (the share of the job's stragglers each cause explains: the task would not straggle had the cause taken its
    typical time; the check) and the diagnosed one; dominant-cause accuracy and precision/recall of the cause set
    against each truth, beside the baseline that always answers data skew and the best constant answer in
    hindsight. Beside Hound, hound_with_nodes: limited processor alone where most of the job's stragglers run on
    machines the other jobs' tasks show slow (node_task_durations, Ouyang et al. Eq. 1), Hound's mixture elsewhere
    (docs/HOUND.md, "node evidence"); Hound's own answer is unchanged. Only for the embedded trace (the only one
    with a truth). Table hound_validation."""
    s, hs = nurd.selection(), nurd.hound()
    if s.trace != "synthetic":
        return dg.MaterializeResult(metadata={"note": f"no ground truth for {s.trace}: only the embedded trace has one"})
    with connected(nurd, duckdb) as con:
        causes = _read(con, "SELECT * EXCLUDE (trace) FROM hound_job_causes WHERE trace = ?", s.trace)
        jobs = sorted(con.execute("SELECT DISTINCT job_id FROM hound_profiles WHERE trace = ?",
                                  [s.trace]).df().job_id)
        scored = _scored(con, nurd, s, hs, causes, jobs, _truth_inputs(con, s.trace))
        n = write_rows(con, "hound_validation", scored.per_job, s.trace)
    answers, per_job, summary, truth_jobs = scored.answers, scored.per_job, scored.summary, scored.truth_jobs
    methods = (("dominant_accuracy", "hound"),
               *((f"{name}_dominant_accuracy", name) for name in answers),
               ("baseline_dominant_accuracy", f"always_{hound_truth.BASELINE_CAUSE}"),
               ("best_constant_dominant_accuracy", hound_truth.BEST_CONSTANT))
    return dg.MaterializeResult(metadata={
        "dagster/row_count": n, "summary": md_table(summary),
        **{hound_truth.metadata_key(key, truth): float(
            summary.set_index(["truth", "method"]).dominant_accuracy[(truth, method)])
           for truth in summary.truth.unique() for key, method in methods},
        "recall_by_cause": md_table(hound_truth.recall_by_cause(per_job)),
        **{f"recall_by_cause_{name}": md_table(hound_truth.recall_by_cause(hound_truth.answer_per_job(per_job, a)))
           for name, a in answers.items()},
        **scored.node_meta,
        "table6": md_table(hound_truth.n_causes_table(causes, truth_jobs, jobs)),
        "table7": md_table(hound_truth.coverage_table(causes, truth_jobs, jobs, scored.stragglers)),
        "per_job": md_table(per_job, max_rows=60)})


@automated_asset(deps=["hound_job_causes", "nurd_eval", "checkpoint_features"], group_name="diagnosis",
                 kinds={"python", "duckdb"})
@google_format_only(HOUND_NEEDS)
def straggler_explanations(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                           duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Flag + explain: every task NURD flags (`predictions`) with its job's Hound mixture and its own top 3 metrics by
    deviation from the tasks finished at the flagging checkpoint, mapped to Hound's named causes. On the embedded
    trace: how often the top signal names a cause that hit the task (planted, or planted plus background eviction).
    Table straggler_explanations."""
    s = nurd.selection()
    started = time.perf_counter()
    with connected(nurd, duckdb) as con:
        for table in ("predictions", "hound_job_causes", "hound_inputs"):
            if not storage.table_exists(con, table):
                raise freshness.StaleTableError(table, "does not exist in the warehouse")
        flagged = con.execute("""SELECT job_id, task_id, flagged_at_s FROM predictions
            WHERE trace = ? AND method = ? AND flagged_at_s IS NOT NULL""", [s.trace, EXPLAINED_METHOD]).df()
        causes = _read(con, "SELECT job_id, cause, weight FROM hound_job_causes WHERE trace = ?", s.trace)
        features = con.execute("""SELECT f.* EXCLUDE (trace), h.sched_delay FROM checkpoint_features f
            SEMI JOIN (SELECT DISTINCT job_id FROM predictions WHERE trace = ? AND method = ?
                       AND flagged_at_s IS NOT NULL) p ON p.job_id = f.job_id
            LEFT JOIN hound_inputs h ON h.trace = f.trace AND h.job_id = f.job_id AND h.task_id = f.task_id
            WHERE f.trace = ? AND f.k >= 0""", [s.trace, EXPLAINED_METHOD, s.trace]).df()
    expl = explain.explain_flagged(flagged, causes, features, EXPLAINED_METHOD)
    with connected(nurd, duckdb) as con:
        n = write_rows(con, "straggler_explanations", expl, s.trace)
    meta = {"dagster/row_count": n, "method": EXPLAINED_METHOD,
            "sample": md_table(expl.sample(min(UI_SAMPLE, len(expl)), random_state=nurd.seed)
                               .sort_values(["job_id", "task_id"]) if len(expl) else expl),
            "seconds": round(time.perf_counter() - started, 1)}
    if s.trace == "synthetic":
        truth_jobs, truth_tasks = hound_truth.load_truth(truth_dir(nurd.data_dir, s.trace))
        with connected(nurd, duckdb) as con:
            added = hound_truth.cause_added_s(truth_tasks, truth_jobs, _truth_inputs(con, s.trace))
        acc = explain.explanation_accuracy(expl, truth_tasks, causes, added)
        meta["accuracy"] = md_table(acc)
        top = acc[acc.answer == "task's top signal"].set_index("truth").accuracy
        meta |= {hound_truth.metadata_key("top_signal_accuracy", t): float(top[t]) for t in top.index}
    return dg.MaterializeResult(metadata=meta)


@automated_asset(deps=["hound_validation", "straggler_explanations"],
                 group_name="reports", kinds={"python"})
@google_format_only(HOUND_NEEDS)
def hound_report(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                 duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Hound's report $NURD_DATA_DIR/reports/hound.md: Tables 4-7 beside the paper's values, hound_validation against
    the always-data-skew baseline, the explanations' accuracy, and Figures 8 (latency models, adjusted R^2), 9
    (dependence after shuffling) and 10 (propensity estimators) as plots. Its own asset and module
    (stragglers/reports/sections/hound.py), so that comparison_tables stays NURD's Table 3."""
    s, hs = nurd.selection(), nurd.hound()
    with connected(nurd, duckdb) as con:
        inputs = _read(con, "SELECT * FROM hound_inputs WHERE trace = ?", s.trace)
        topics = _read(con, "SELECT * EXCLUDE (trace) FROM hound_topics WHERE trace = ?", s.trace)
        causes = _read(con, "SELECT * EXCLUDE (trace) FROM hound_job_causes WHERE trace = ?", s.trace)
        expl = _read(con, "SELECT * EXCLUDE (trace) FROM straggler_explanations WHERE trace = ?", s.trace)
    jobs = sorted(inputs.job_id.unique())
    truth_jobs = validation = per_job = acc = n_causes = stragglers = None
    if s.trace == "synthetic":
        with connected(nurd, duckdb) as con:
            scored = _scored(con, nurd, s, hs, causes, jobs, inputs)
        truth_jobs, stragglers = scored.truth_jobs, scored.stragglers
        per_job, validation = scored.per_job, scored.summary
        acc = explain.explanation_accuracy(expl, scored.truth_tasks, causes, scored.added)
        n_causes = hound_truth.n_causes_table(causes, truth_jobs, jobs)
    coverage = hound_truth.coverage_table(causes, truth_jobs, jobs, stragglers)
    out = build_hound_report(nurd.data_path / "reports", trace=s.trace, inputs=inputs, topics=topics,
                             job_causes=causes, n_causes=n_causes, coverage=coverage, validation=validation,
                             explanation_acc=acc, settings=hs, validation_per_job=per_job, log=context.log.info)
    meta = {"report": dg.MetadataValue.path(str(out["report"])), "table7": md_table(coverage),
            "figure8": md_table(out["figure8"]), "figure9": md_table(out["figure9"]),
            "figure10": md_table(out["figure10"])}
    if validation is not None:
        meta |= {"hound_validation": md_table(validation), "table6": md_table(n_causes),
                 "explanation_accuracy": md_table(acc)}
    for name, path in out["figures"].items():
        meta[f"plot_{name}"] = md_image_file(path)
    return dg.MaterializeResult(metadata=meta)


checks = [
    table_check(hound_profiles, "hound_profiles"),
    table_check(hound_topics, "hound_topics"),
    table_check(hound_job_causes, "hound_job_causes"),
    table_check(hound_validation, "hound_validation", applies=lambda s: s.trace == "synthetic"),
    table_check(straggler_explanations, "straggler_explanations"),
]
assets = [hound_profiles, hound_topics, hound_job_causes, hound_validation, straggler_explanations, hound_report]
