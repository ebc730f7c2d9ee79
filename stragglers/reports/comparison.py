"""The comparison with the paper, built from a list of sections.

A section is a function of the ``Comparison`` (the tables the report reads, by warehouse table
name, and what several sections share: Table 3, the headline, the operator's table) that returns
the ``Part`` it adds to the report: its tables in order, their Markdown views, its figures, which
figure follows which table, and its captions; or None when its tables are absent. ``SECTIONS``
lists them in the order the report shows them; ``build_report`` renders each, writes the
"what this run shows" paragraph first and publishes the files (stragglers.reports.publish).

The tables a section may read (``Comparison.get``): ``job_metrics`` (the paper's protocol's: empty
where only the operator's protocol applies, Spark event logs, whose report opens with
``spark_answer``, the settings to set),
``f1_over_time``, ``completion_times`` (stragglers.prediction.completion.completion_table),
``speculation_times`` and ``speculation_job_times`` (speculation_table, speculation_jobs: the
operator's protocol), ``operator_job_metrics``, ``operator_cost_curve``, ``protocol_ablation``,
``nurd_sensitivity``, ``reexecution_summary``, ``matched_budgets`` and ``sweep_curve``
(stragglers.prediction.sweep), and ``traces`` (one row per trace: its data, jobs, methods and the
features they saw).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from stragglers.prediction import metrics
from stragglers.prediction.completion import RELAUNCH_SEEDS
from stragglers.reports import budgets as budget_report
from stragglers.reports import captions as cap
from stragglers.reports import comparison_figures as figs
from stragglers.reports import operator, reexecution, spark_answer as spark, story, views
from stragglers.reports.paper import PAPER_TABLE3, compare_with_paper
from stragglers.reports.publish import write_report
from stragglers.reports.style import display_name
from stragglers.reports import tables as derived


@dataclass
class Report:
    """What ``build_report`` made: report.md (report.html beside it), its tables and its plots."""

    path: Path
    tables: dict[str, pd.DataFrame]
    plots: dict[str, Path]


@dataclass
class Part:
    """What one section adds to the report (write_report's arguments, for its own tables)."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    views: dict[str, pd.DataFrame] = field(default_factory=dict)
    plots: dict[str, object] = field(default_factory=dict)
    figures_after: dict[str, list[str]] = field(default_factory=dict)
    captions: dict[str, tuple[str, str]] = field(default_factory=dict)


def part(name: str, table: pd.DataFrame, view=None, *figures: tuple[str, object], caption=None) -> Part:
    """Section ``name`` of the report: its table, its Markdown view (None: the table itself) and the
    figures (name, PNG) shown after it, in that order."""
    return Part({name: table}, {} if view is None else {name: view}, dict(figures),
                {name: [figure for figure, _ in figures]}, {} if caption is None else {name: caption})


class Comparison:
    """The tables the report reads (warehouse table name -> frame, or None when absent), its
    settings, a scratch directory for the figures, and what several sections share."""

    def __init__(self, tables: Mapping[str, pd.DataFrame | None], workdir: Path, *, n_boot: int = 1000,
                 seed: int = 0, completion_seeds=RELAUNCH_SEEDS):
        self.tables, self.workdir = dict(tables), Path(workdir)
        self.n_boot, self.seed, self.completion_seeds = n_boot, seed, completion_seeds
        self.captions = views.captions(n_boot=n_boot, seed=seed, seeds=completion_seeds)

    def get(self, name: str) -> pd.DataFrame | None:
        return self.tables.get(name)

    def given(self, name: str) -> pd.DataFrame | None:
        """The table when it has rows, else None."""
        df = self.get(name)
        return df if df is not None and len(df) else None

    def png(self, name: str) -> Path:
        return self.workdir / name

    @property
    def paper(self) -> bool:
        """Whether the paper's protocol ran (job_metrics has rows): not on traces where it does not
        apply, such as Spark event logs (their evaluations are the operator's only)."""
        return self.given("job_metrics") is not None

    @cached_property
    def t3(self) -> pd.DataFrame:
        return derived.with_completion(compare_with_paper(metrics.table3(self.get("job_metrics"), n_boot=self.n_boot,
                                                         seed=self.seed)), self.get("completion_times"))

    @cached_property
    def early(self) -> pd.DataFrame:
        return story.earliness(self.get("job_metrics"))

    @cached_property
    def completion_summary(self) -> pd.DataFrame | None:
        completion = self.given("completion_times")
        return None if completion is None else derived.completion_summary(completion)

    @cached_property
    def headline(self) -> pd.DataFrame:
        return story.headline(self.t3, self.early, self.completion_summary)

    @cached_property
    def operator(self) -> pd.DataFrame | None:
        """The operator's view (stragglers.reports.operator): with operator_job_metrics and speculation_times."""
        if self.given("operator_job_metrics") is None or self.get("speculation_times") is None:
            return None
        return operator.operator_table(metrics.table3(self.get("operator_job_metrics"), n_boot=self.n_boot, seed=self.seed),
                                       self.get("speculation_times"))

    @cached_property
    def verdict(self) -> pd.DataFrame | None:
        """The survival family against the free rules, per job of speculation_job_times."""
        if self.operator is None or self.given("speculation_job_times") is None:
            return None
        verdict = operator.family_verdict(self.get("operator_job_metrics"), self.get("speculation_job_times"),
                                          n_boot=self.n_boot, seed=self.seed)
        return verdict if len(verdict) else None

    @property
    def budgets(self) -> bool:
        """Every method at every budget is shown (the operator's answer first)."""
        return (self.operator is not None and self.given("matched_budgets") is not None
                and self.get("sweep_curve") is not None)


Section = Callable[[Comparison], "Part | None"]


def ranking_note(t3: pd.DataFrame) -> str:
    """One paragraph per trace: how the ranking by f1_auc differs from the ranking by F1."""
    if "f1_auc" not in t3:
        return ""
    out = []
    for trace, g in t3.groupby("trace", sort=True):
        g = g.dropna(subset=["f1", "f1_auc"])
        if len(g) < 2:
            continue
        by_f1 = g.sort_values("f1", ascending=False, kind="mergesort")
        by_auc = g.sort_values("f1_auc", ascending=False, kind="mergesort")
        rank_f1 = {m: i + 1 for i, m in enumerate(by_f1["method"])}
        rank_auc = {m: i + 1 for i, m in enumerate(by_auc["method"])}
        rho = float(pd.Series(rank_f1).corr(pd.Series(rank_auc), method="spearman"))
        moves = sorted(rank_f1, key=lambda m: -abs(rank_f1[m] - rank_auc[m]))[:3]

        def top(df, col):
            return ", ".join(f"{display_name(m)} {v:.2f}" for m, v in zip(df["method"][:3], df[col][:3]))
        out.append(
            f"**{trace}**: by final F1 the top three are {top(by_f1, 'f1')}; by f1_auc (F1 averaged over "
            f"normalized time) they are {top(by_auc, 'f1_auc')}. Spearman correlation of the two rankings over "
            f"{len(g)} methods: {rho:.2f}. Largest moves (rank by F1 -> rank by f1_auc): "
            + "; ".join(f"{display_name(m)} {rank_f1[m]} -> {rank_auc[m]}" for m in moves) + ".")
    return "\n\n".join(out)


def earliness_view(t3: pd.DataFrame) -> pd.DataFrame:
    """Accuracy beside earliness and completion time, per method (the columns Table 3 adds)."""
    cols = {"f1": "F1 (0-1)", "f1_auc": "f1_auc (0-1)", "median_lead": "median lead (share of tau)",
            "completion_unlimited": "jobs' completion time, Alg. 2",
            "completion_limited_avg": "jobs' completion time, Alg. 3"}
    out = t3[["trace", "method"]].copy()
    for c, label in cols.items():
        if c in t3:
            out[label] = (t3[c].map(views.jct_words) if c.startswith("completion")
                          else t3[c].map(views.lead_words) if c == "median_lead"
                          else t3[c].map(lambda v: "" if pd.isna(v) else f"{v:.2f}"))
    return views.banded(out)


# ---------------------------------------------------------------------------
# The sections, each named after the table it adds
# ---------------------------------------------------------------------------

def spark_settings(c: Comparison) -> Part | None:
    """On Spark event logs, before all: the settings to set (table spark_answer) and their numbers."""
    rows = c.given("spark_answer_rows")
    if rows is None:
        return None
    return part("spark_answer", rows, spark.answer_view(rows), caption=cap.SPARK_ANSWER_CAPTION)


def answer(c: Comparison) -> Part | None:
    """The operator's answer (what 2% extra machine time buys) and the curves' figure."""
    if not c.budgets:
        return None
    budgets, sweep = c.get("matched_budgets"), c.get("sweep_curve")
    table = budget_report.answer_table(budgets, c.given("named_comparisons"))
    out = Part(plots={"budget_curves": budget_report.plot_budget_curves(sweep, budgets, c.png("bc.png"))},
               figures_after={"answer": ["budget_curves"]},
               captions={"answer": cap.ANSWER_CAPTION, "fig:budget_curves": cap.BUDGET_CURVES_CAPTION})
    if table is not None and len(table):         # before all: the operator's answer and its figure
        out.tables["answer"] = table
    return out


def named_comparisons(c: Comparison) -> Part | None:
    """The comparison named before it is scored, every budget (table named_comparisons)."""
    comp = c.given("named_comparisons")
    if comp is None or not c.budgets:
        return None
    return part("named_comparisons", comp, budget_report.comparison_view(comp), caption=cap.NAMED_COMPARISONS_CAPTION)


def traces(c: Comparison) -> Part | None:
    """First: what every table below is about."""
    df = c.given("traces")
    return None if df is None else part("traces", df, caption=cap.TRACES_CAPTION)


def matched_budgets(c: Comparison) -> Part | None:
    if not c.budgets:
        return None
    budgets = c.get("matched_budgets")
    return part("matched_budgets", budgets, budget_report.budget_view(budgets), caption=cap.MATCHED_BUDGETS_CAPTION)


def operator_view(c: Comparison) -> Part | None:
    """The operator's view and its Pareto figure; below the answer, each method at its own default."""
    op = c.operator
    if op is None:
        return None
    view, caption = operator.operator_view(op), cap.OPERATOR_CAPTION
    if c.budgets:
        # the answer first (every method at every budget); the single-point table stays below it
        view = view.drop(columns=["Pareto", "beats free rules"])
        caption = (cap.OPERATOR_CAPTION[0] + ": each method at its own default",
                   cap.OPERATOR_CAPTION[1].split(" Pareto:")[0])
    out = part("operator_view", op, view,
               ("operator_pareto", operator.plot_pareto(op, c.png("op.png"), c.get("operator_cost_curve"))),
               caption=caption)
    out.captions["fig:operator_pareto"] = cap.OPERATOR_PARETO_CAPTION
    return out


def headline(c: Comparison) -> Part | None:
    if not c.paper:
        return None
    caption = c.captions["headline"]
    if c.operator is not None:
        caption = ("Reproducing the paper's protocol: headline numbers", caption[1])
    return part("headline", c.headline, story.headline_view(c.headline), caption=caption)


def table3(c: Comparison) -> Part | None:
    if not c.paper:
        return None
    return part("table3", c.t3, views.table3_view(c.t3, c.early))


def earliness(c: Comparison) -> Part | None:
    if not c.paper:
        return None
    t3 = c.t3
    if not ("f1_auc" in t3 and t3["f1_auc"].notna().any()):
        return None
    heading, caption = cap.EARLINESS_CAPTION
    out = part("earliness", t3.reindex(columns=["trace", "method", "f1", "f1_auc", "median_lead",
                                                "completion_unlimited", "completion_limited_avg"]),
               earliness_view(t3), ("accuracy_vs_earliness", figs.plot_accuracy_vs_earliness(t3, c.png("ae.png"))),
               caption=(heading, caption + " " + ranking_note(t3)))
    out.captions["fig:accuracy_vs_earliness"] = cap.ACCURACY_VS_EARLINESS_CAPTION
    return out


def f1_over_time(c: Comparison) -> Part | None:
    df = c.given("f1_over_time")
    if df is None:
        return None
    ft = derived.f1_over_time_table(df)
    return part("f1_over_time", ft, views.f1_over_time_view(ft),
                ("f1_over_time", figs.plot_f1_over_time(ft, c.png("f1_over_time.png"))))


def completion_summary(c: Comparison) -> Part | None:
    completion = c.given("completion_times")
    if completion is None or not c.paper:
        return None
    figures = [("completion_unlimited", figs.plot_completion_unlimited(completion, c.png("cu.png")))] \
        if (completion["algorithm"] == "unlimited").any() else []
    if (completion["algorithm"] == "limited").any():
        figures.append(("completion_limited_avg", figs.plot_completion_limited_avg(completion, c.png("cla.png"))))
    return part("completion_summary", c.completion_summary, views.completion_summary_view(c.completion_summary),
                *figures)


def completion(c: Comparison) -> Part | None:
    completion = c.given("completion_times")
    if completion is None:
        return None
    if (completion["algorithm"] == "limited").any():   # the per-machine-count table and figure exist only for the limited algorithm
        return part("completion", completion, views.completion_view(completion),
                    ("completion_limited", figs.plot_completion_limited(completion, c.png("cl.png"))))
    return Part(tables={"completion": completion})


def _study(name: str, caption: tuple[str, str], plot, png: str) -> Section:
    """The section of an optional table of its own asset: shown with its plot when it was materialized."""
    def section(c: Comparison) -> Part | None:
        df = c.given(name)
        if df is None:
            return None
        return part(name, df, df.drop(columns=["settings"], errors="ignore"), (name, plot(df, c.png(png))),
                    caption=caption)
    section.__name__ = name
    return section


protocol_ablation = _study("protocol_ablation", cap.ABLATION_CAPTION, figs.plot_ablation, "pa.png")
nurd_sensitivity = _study("nurd_sensitivity", cap.SENSITIVITY_CAPTION, figs.plot_sensitivity, "ns.png")


def reexecutions(c: Comparison) -> Part | None:
    df = c.given("reexecution_summary")
    if df is None:
        return None
    return part("reexecutions", df, reexecution.view(df),
                caption=("What a copy buys: the traces' own re-executions", reexecution.INTRO))


def paper_table3(c: Comparison) -> Part | None:
    if not c.paper:
        return None
    return part("paper_table3", PAPER_TABLE3, views.paper_table3_view(PAPER_TABLE3))


def survival_verdict(c: Comparison) -> Part | None:
    return None if c.verdict is None else part("survival_verdict", c.verdict, caption=cap.SURVIVAL_VERDICT_CAPTION)


def cost_curve(c: Comparison) -> Part | None:
    df = c.given("operator_cost_curve")
    if c.operator is None or df is None:
        return None
    return part("cost_curve", df, caption=cap.COST_CURVE_CAPTION)


def sweep_curve(c: Comparison) -> Part | None:
    if not c.budgets:
        return None
    sweep = c.get("sweep_curve")
    view = sweep.assign(
        method=sweep["method"].map(display_name),
        jct_reduction=(sweep["jct_reduction"] * 100).round(2),
        extra_machine_share=(sweep["extra_machine_share"] * 100).round(3)).rename(
        columns={"jct_reduction": "jobs' completion time shortened by (%)", "extra_machine_share": "extra machine (%)",
                 "n_jobs": "jobs"})
    return part("sweep_curve", sweep, view, caption=cap.SWEEP_CURVE_CAPTION)


#: The report's sections in the order it shows them: the operator's answer and view first (when
#: the operator's protocol ran), then the paper's protocol, the optional studies, the appendix.
SECTIONS: tuple[Section, ...] = (
    spark_settings, answer, named_comparisons, traces, matched_budgets, operator_view, headline, table3, earliness, f1_over_time,
    completion_summary, completion, protocol_ablation, nurd_sensitivity, reexecutions, paper_table3,
    survival_verdict, cost_curve, sweep_curve)


def what_this_run_shows(c: Comparison) -> str:
    """The report's opening: the operator's answer (or its paragraph) and the survival family's
    sentence when the operator's protocol ran, then the paper's protocol's headline in words."""
    answers = c.given("spark_answer")
    opening = "" if answers is None else spark.opening(answers) + "\n\n"
    summary = ""
    if c.paper:
        n_methods = c.get("job_metrics").groupby("trace")["method"].nunique().to_dict()
        summary = story.what_this_run_shows(c.headline, n_methods)
    operator_rows = c.given("operator_job_metrics")
    absent = spark.paper_not_applicable(set() if operator_rows is None else set(operator_rows["trace"]))
    if absent:
        summary = (summary + "\n\n" if summary else "") + " ".join(absent)
    if c.operator is None:
        return opening + summary
    family = "" if c.verdict is None else "\n\n" + operator.family_sentences(c.verdict, c.operator)
    first = (budget_report.answer_paragraph(c.get("matched_budgets"), c.given("named_comparisons"),
                                            c.get("sweep_curve")) if c.budgets
             else operator.operator_paragraph(c.operator))
    paper = "\n\nReproducing the paper's protocol:\n\n" + summary if c.paper else "\n\n" + summary
    return opening + first + family + paper


def build_report(out_dir, tables: Mapping[str, pd.DataFrame | None], sections: Sequence[Section] = SECTIONS, *,
                 n_boot: int = 1000, seed: int = 0, completion_seeds=RELAUNCH_SEEDS,
                 notes: str | None = None) -> Report:
    """Render each of ``sections`` from ``tables`` (warehouse table name -> frame; see the module's
    docstring) and publish report.md, report.html, CSV, Parquet and PNG under ``out_dir``."""
    with tempfile.TemporaryDirectory() as d:
        c = Comparison(tables, Path(d), n_boot=n_boot, seed=seed, completion_seeds=completion_seeds)
        whole = Part(captions=dict(c.captions))
        for section in sections:
            got = section(c)
            if got is None:
                continue
            whole.tables.update(got.tables)
            whole.views.update(got.views)
            whole.plots.update(got.plots)
            whole.figures_after.update(got.figures_after)
            whole.captions.update(got.captions)
        path = write_report(out_dir, whole.tables, whole.plots, notes=notes, markdown_tables=whole.views,
                            summary=what_this_run_shows(c), captions=whole.captions,
                            figures_after=whole.figures_after)
    out_dir = Path(out_dir)
    return Report(path, whole.tables, {name: out_dir / f"{name}.png" for name in whole.plots})
