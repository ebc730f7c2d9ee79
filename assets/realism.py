"""trace_realism: the configured trace's statistics beside another trace's, with a
distance each (stragglers/warehouse/realism.py); reexecutions: the trace's own re-executions against
the simulator's copy model (stragglers/prediction/copies/reexecution.py)."""

import dagster as dg
from dagster_duckdb import DuckDBResource

import pandas as pd

from stragglers.diagnosis.truth import load_truth
from stragglers.prediction.copies import reexecution
from stragglers.reports.sections.reexecution import write_report as write_reexecution_report
from stragglers.warehouse import realism
from stragglers.trace_formats import FORMATS
from stragglers.traces.fetch import truth_dir
from stragglers.warehouse.runner import replace_trace_frame
from .resources import PipelineSettings

from .checks import table_check
from .common import automated_asset, connected, google_format_only, md_table


@automated_asset(deps=["tasks"], group_name="warehouse", kinds={"python", "duckdb"})
@google_format_only("the statistics are those of the Google 2011 tables")
def trace_realism(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                  duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Per-job and per-task statistics of the configured trace (sql/trace_statistics.sql: p90 latency, p90/p50,
    max/p50, tasks per job, SUBMIT-to-SCHEDULE delay, evictions and failures per task, task and job end states,
    usage values) stored in trace_statistics, and compared with NURD_REALISM_AGAINST (default google_2011) when
    that trace's statistics are in the warehouse: KS distance (numeric) or total variation (end states) per
    statistic, overlaid CDFs. Usage of a trace without task_usage comes from NURD_USAGE_SAMPLE (a CSV with a
    header, e.g. the real excerpt's sample)."""
    s = nurd.selection()
    with connected(nurd, duckdb) as con:
        n = realism.build_trace_statistics(con, s, nurd.usage_sample or None)
        others = [t for t in realism.traces_with_statistics(con) if t != s.trace]
        against = nurd.realism_against if nurd.realism_against != s.trace else (others[0] if others else "")
        meta = {"trace": s.trace, "observations": n}
        if against not in others:
            note = (f"no statistics of {against or 'another trace'} in the warehouse yet: materialize "
                    f"trace_realism with NURD_TRACE={against or '<other trace>'} once, then again with this trace")
            context.log.info(note)
            return dg.MaterializeResult(metadata=meta | {"comparison": note})
        table = realism.compare(con, s.trace, against)
        png = realism.cdf_figure(con, s.trace, against)
    within = int(table.within_target.fillna(False).sum())
    out = nurd.data_path / "reports"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"trace_realism__{s.trace}__{against}.png").write_bytes(png)
    text = (f"# {s.trace} vs {against}\n\n{within} of {len(table)} statistics within distance "
            f"{realism.TARGET}.\n\n" + table.to_markdown(index=False, floatfmt=".3f")
            + f"\n\n![CDFs](trace_realism__{s.trace}__{against}.png)\n")
    tmp = out / f".trace_realism__{s.trace}__{against}.md.tmp"
    tmp.write_text(text)
    tmp.replace(out / f"trace_realism__{s.trace}__{against}.md")
    return dg.MaterializeResult(metadata=meta | {
        "against": against,
        "within_target": within,
        "statistics": len(table),
        "max_distance": float(table.distance.max()),
        "comparison": md_table(table),
        "cdfs": dg.MetadataValue.md(f"![CDFs]({realism.png_data_url(png)})"),
        "report": dg.MetadataValue.path(str(out / f"trace_realism__{s.trace}__{against}.md")),
    })


@automated_asset(deps=["jobs"], group_name="warehouse", kinds={"python", "duckdb"})
@google_format_only("re-executions are read from Google task_events")
def reexecutions(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                 duckdb: DuckDBResource) -> dg.MaterializeResult:
    """What a copy buys, from the trace's own re-executions: every task whose first life (task_lifecycle) FINISHed and
    that FINISHed again, on another machine, in its next SCHEDULE -> FINISH (sql/reexecution_pairs.sql; rerun tasks
    left out are kept with the reason and counted). Per trace (reexecution_summary): pairs, jobs, the correlation
    of the two lives' log-latencies relative to the job's median, P(second life straggles | first did) and the base
    rate, with bootstrap intervals over jobs; beside them the simulator's copy model replayed on the same pairs
    (stragglers/prediction/copies/reexecution.py); on the embedded trace, the generator's own re-runs of every
    finished task, from its truth."""
    s = nurd.selection()
    with connected(nurd, duckdb) as con:
        table = reexecution.build_pairs(con, s, nurd.min_finished)
        pairs = table[table.status == "pair"]
        lives = reexecution.job_first_lives(con, s.trace, pairs.job_id.unique())
        generated = None
        if FORMATS[s.trace].embedded:    # the generator's own re-runs, from its truth
            truth_jobs, truth_tasks = load_truth(truth_dir(nurd.data_dir, s.trace))
            generated = reexecution.generator_pairs(truth_tasks, truth_jobs, min_finished=nurd.min_finished,
                                                    quantile=s.quantile, seed=nurd.seed)
        summary = reexecution.summarize(table, lives, trace=s.trace, n_boot=nurd.n_boot, seed=nurd.seed,
                                        copy_keeps=nurd.copy_keeps, generated=generated)
        replace_trace_frame(con, "reexecution_summary", summary, s.trace)
    counts = reexecution.left_out_counts(table)
    context.log.info(f"{s.trace}: {counts['pair']} re-execution pairs of {len(table)} rerun tasks; left out: "
                     + ", ".join(f"{k} {v}" for k, v in counts.items() if k != "pair"))
    path = write_reexecution_report(nurd.data_path / "reports", s.trace, summary, counts)
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(table), "pairs": counts["pair"], "rerun_tasks": len(table),
        "left_out": md_table(pd.DataFrame([{"status": k, "tasks": v} for k, v in counts.items()])),
        "summary": md_table(summary.drop(columns=["trace"])),
        "report": dg.MetadataValue.path(str(path)),
    })


@dg.asset_check(asset=trace_realism, name="reexecution_generator_within_real", blocking=False,
                description="The generator's re-execution model (reexecution_summary of a generated trace) inside "
                            "a real trace's 95% intervals on the correlation of the two lives' relative "
                            "log-latencies and on P(second life straggles | first did) "
                            "(stragglers/warehouse/realism.py generator_against_real); passes with a note when the "
                            "warehouse lacks a generated or a real trace's re-executions.")
def reexecution_generator_within_real(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with connected(nurd, duckdb) as con:
        table = realism.generator_against_real(con)
    if not len(table):
        return dg.AssetCheckResult(passed=True, metadata={
            "note": "no generated and real trace both with reexecution_summary in this warehouse: nothing to hold"})
    outside = table[~table.within]
    return dg.AssetCheckResult(passed=not len(outside), severity=dg.AssetCheckSeverity.ERROR, metadata={
        "outside": len(outside), "table": md_table(table)},
        description=None if not len(outside) else "; ".join(
            f"{r.generated}'s {r.statistic} {r.value:.3f} outside {r.real}'s [{r.real_lo:.3f}, {r.real_hi:.3f}]"
            for r in outside.itertuples()))


checks = [
    table_check(reexecutions, "reexecution_pairs",
                params=lambda n: {"min_finished": n.min_finished}),
]

# on trace_realism, apart from ``checks`` (on reexecutions): a run of reexecutions alone need not build trace_realism
realism_checks = [reexecution_generator_within_real]
