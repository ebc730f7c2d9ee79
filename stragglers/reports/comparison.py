"""The comparison with the paper, built from a list of sections in chapters.

A section is a function of the ``Comparison`` (the tables the report reads, by warehouse table
name, and what several sections share: Table 3, the headline, the operator's table) that returns
the ``Part`` it adds to the report: its tables in order, their Markdown views, its figures, which
figure comes before or after which table, its captions and any text after a table; or None when its
tables are absent. ``CHAPTERS`` groups them in the order the report shows them: the operator's
evidence, the paper's reproduction, the appendices. ``build_report`` writes the answer box first
(stragglers.reports.sections.answer_box), renders each section and publishes the files
(stragglers.reports.page.publish).

The tables a section may read (``Comparison.get``): ``job_metrics`` (the paper's protocol's: empty
where only the operator's protocol applies, Spark event logs, whose report opens with
``spark_answer``, the settings to set),
``f1_over_time``, ``completion_times`` (stragglers.prediction.copies.completion.completion_table),
``speculation_times`` and ``speculation_job_times`` (speculation_table, speculation_jobs: the
operator's protocol), ``operator_job_metrics``, ``operator_cost_curve``, ``protocol_ablation``,
``nurd_sensitivity``, ``reexecution_summary``, ``matched_budgets`` and ``sweep_curve``
(stragglers.prediction.verdicts.sweep), and ``traces`` (one row per trace: its data, jobs, methods and the
features they saw).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from stragglers.prediction.replay import metrics
from stragglers.prediction.engine.draws import RELAUNCH_SEEDS
from stragglers.reports.sections import budgets as budget_report
from stragglers.reports.sections import captions as cap
from stragglers.reports.sections import comparison_figures as figs
from stragglers.reports.page import figures as draw
from stragglers.reports.sections import operator, reexecution, spark_answer as spark, story
from stragglers.reports.page import views
from stragglers.reports.sections.answer_box import answer_boxes, boxes_markdown, boxes_table
from stragglers.reports.sections.budget_figure import budget_curves_notes, plot_budget_curves
from stragglers.reports.page.glossary import TERMS, method_terms
from stragglers.reports.sections.paper import PAPER_TABLE3, compare_with_paper
from stragglers.reports.sections.paper_sections import best_f1_sentence, earliness_view, protocols_sentence, ranking_note
from stragglers.reports.page.publish import write_report
from stragglers.reports.page.style import display_name
from stragglers.reports.sections import tables as derived

TITLE = "Straggler prediction: what speculative copies buy, and NURD (MLSys 2022) reproduced"


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
    figures_before: dict[str, list[str]] = field(default_factory=dict)
    text_after: dict[str, str] = field(default_factory=dict)


def part(name: str, table: pd.DataFrame, view=None, *figures: tuple[str, object], caption=None,
         text: str = "") -> Part:
    """Section ``name`` of the report: its table, its Markdown view (None: the table itself), the
    figures (name, PNG) shown after it, in that order, and ``text`` after the table."""
    return Part({name: table}, {} if view is None else {name: view}, dict(figures),
                {name: [figure for figure, _ in figures]}, {} if caption is None else {name: caption},
                text_after={name: text} if text else {})


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
        """The operator's view (stragglers.reports.sections.operator): with operator_job_metrics and speculation_times."""
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

    @cached_property
    def boxes(self):
        """The answer box of every trace (stragglers.reports.sections.answer_box)."""
        operator_t3 = None
        if self.given("operator_job_metrics") is not None:
            operator_t3 = metrics.table3(self.get("operator_job_metrics"), n_boot=self.n_boot, seed=self.seed)
        return answer_boxes(self.tables, operator_t3=operator_t3, paper_t3=self.t3 if self.paper else None)


Section = Callable[[Comparison], "Part | None"]


# ---------------------------------------------------------------------------
# The sections, each named after the table it adds
# ---------------------------------------------------------------------------

def spark_settings(c: Comparison) -> Part | None:
    """On Spark event logs: the setting you run, Spark 4.0's defaults and the answer (spark_answer_rows)."""
    rows = c.given("spark_answer_rows")
    if rows is None:
        return None
    return part("spark_answer", rows, spark.answer_view(rows), caption=cap.SPARK_ANSWER_CAPTION)


def matched_budgets(c: Comparison) -> Part | None:
    """The curves' figure, then every method at the report's budget, tuned on earlier jobs."""
    if not c.budgets:
        return None
    budgets, sweep = c.get("matched_budgets"), c.get("sweep_curve")
    heading, caption = cap.BUDGET_CURVES_CAPTION
    notes = budget_curves_notes(sweep)
    out = part("matched_budgets", budgets, budget_report.budget_view(budgets), caption=cap.MATCHED_BUDGETS_CAPTION)
    out.plots["budget_curves"] = plot_budget_curves(sweep, budgets, c.png("bc.png"))
    out.figures_before["matched_budgets"] = ["budget_curves"]
    out.figures_after["matched_budgets"] = []
    out.captions["fig:budget_curves"] = (heading, caption + (" " + notes if notes else ""))
    return out


def named_comparisons(c: Comparison) -> Part | None:
    """The comparison named before it is scored, every budget (table named_comparisons), in words after."""
    comp = c.given("named_comparisons")
    if comp is None or not c.budgets:
        return None
    words = budget_report.answer_paragraph(c.get("matched_budgets"), comp, c.get("sweep_curve"))
    return part("named_comparisons", comp, budget_report.comparison_view(comp), caption=cap.NAMED_COMPARISONS_CAPTION,
                text=("In words:\n\n" + words) if words else "")


def traces(c: Comparison) -> Part | None:
    """What every table is about: each trace, its data, jobs, methods and features."""
    df = c.given("traces")
    return None if df is None else part("traces", df, caption=cap.TRACES_CAPTION)


def operator_view(c: Comparison) -> Part | None:
    """The operator's view and its Pareto figure: each method at its own default."""
    op = c.operator
    if op is None:
        return None
    view, caption = operator.operator_view(op), cap.OPERATOR_CAPTION
    view = view.drop(columns=["Pareto", "beats free rules"])
    caption = (cap.OPERATOR_CAPTION[0] + ": each method at its own default", cap.OPERATOR_CAPTION[1])
    text = "" if c.budgets else operator.operator_paragraph(op)
    out = part("operator_view", op, view,
               ("operator_pareto", operator.plot_pareto(op, c.png("op.png"), c.get("operator_cost_curve"))),
               caption=caption, text=text)
    heading, words = cap.OPERATOR_PARETO_CAPTION
    notes = operator.pareto_notes(op, c.get("operator_cost_curve"))
    out.captions["fig:operator_pareto"] = (heading, words + (" " + notes if notes else ""))
    return out


def headline(c: Comparison) -> Part | None:
    if not c.paper:
        return None
    n_methods = c.get("job_metrics").groupby("trace")["method"].nunique().to_dict()
    return part("headline", c.headline, story.headline_view(c.headline), caption=c.captions["headline"],
                text=story.what_this_run_shows(c.headline, n_methods))


def table3(c: Comparison) -> Part | None:
    if not c.paper:
        return None
    return part("table3", c.t3, views.table3_view(c.t3, c.early), caption=c.captions["table3"],
                text=best_f1_sentence(c.t3))


def earliness(c: Comparison) -> Part | None:
    if not c.paper:
        return None
    t3 = c.t3
    if not ("f1_auc" in t3 and t3["f1_auc"].notna().any()):
        return None
    out = part("earliness", t3.reindex(columns=["trace", "method", "f1", "f1_auc", "median_lead",
                                                "completion_unlimited", "completion_limited_avg"]),
               earliness_view(t3), ("accuracy_vs_earliness", figs.plot_accuracy_vs_earliness(t3, c.png("ae.png"))),
               caption=cap.EARLINESS_CAPTION, text=ranking_note(t3))
    out.captions["fig:accuracy_vs_earliness"] = cap.ACCURACY_VS_EARLINESS_CAPTION
    return out


def _lines_note(table: pd.DataFrame, x: str, y: str, scale: float = 1.0) -> str:
    said = [f"on {trace}, {' = '.join(display_name(m) for m in group)}"
            for trace, group in draw.coinciding_lines(table, x, y, scale)]
    return ("Drawn as one line because they coincide (within 0.5% of the axis): " + "; ".join(said) + ".") \
        if said else ""


def f1_over_time(c: Comparison) -> Part | None:
    df = c.given("f1_over_time")
    if df is None:
        return None
    ft = derived.f1_over_time_table(df)
    out = part("f1_over_time", ft, views.f1_over_time_view(ft),
               ("f1_over_time", figs.plot_f1_over_time(ft, c.png("f1_over_time.png"))),
               caption=c.captions["f1_over_time"])
    heading, words = c.captions["fig:f1_over_time"]
    note = _lines_note(ft.assign(t=ft["k"] / 10), "t", "f1")
    out.captions["fig:f1_over_time"] = (heading, words + (" " + note if note else ""))
    return out


def completion_summary(c: Comparison) -> Part | None:
    completion = c.given("completion_times")
    if completion is None or not c.paper:
        return None
    figures = [("completion_unlimited", figs.plot_completion_unlimited(completion, c.png("cu.png")))] \
        if (completion["algorithm"] == "unlimited").any() else []
    if (completion["algorithm"] == "limited").any():
        figures.append(("completion_limited_avg", figs.plot_completion_limited_avg(completion, c.png("cla.png"))))
    return part("completion_summary", c.completion_summary, views.completion_summary_view(c.completion_summary),
                *figures, caption=c.captions["completion_summary"])


def completion(c: Comparison) -> Part | None:
    completion = c.given("completion_times")
    if completion is None:
        return None
    if (completion["algorithm"] == "limited").any():   # the per-machine-count table and figure exist only for the limited algorithm
        out = part("completion", completion, views.completion_view(completion),
                   ("completion_limited", figs.plot_completion_limited(completion, c.png("cl.png"))),
                   caption=c.captions["completion"])
        heading, words = c.captions["fig:completion_limited"]
        limited = completion[completion["algorithm"] == "limited"]
        note = _lines_note(limited, "machines", "reduction_mean", 100)
        out.captions["fig:completion_limited"] = (heading, words + (" " + note if note else ""))
        return out
    return Part(tables={"completion": completion}, captions={"completion": c.captions["completion"]})


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
    return part("paper_table3", PAPER_TABLE3, views.paper_table3_view(PAPER_TABLE3), caption=c.captions["paper_table3"])


def survival_verdict(c: Comparison) -> Part | None:
    if c.verdict is None:
        return None
    return part("survival_verdict", c.verdict, caption=cap.SURVIVAL_VERDICT_CAPTION,
                text=operator.family_sentences(c.verdict, c.operator))


def cost_curve(c: Comparison) -> Part | None:
    df = c.given("operator_cost_curve")
    if c.operator is None or df is None:
        return None
    return part("cost_curve", df, caption=cap.COST_CURVE_CAPTION)


def sweep_curve(c: Comparison) -> Part | None:
    # every point of every sweep, shown also where too few jobs leave nothing tuned or named
    sweep = c.given("sweep_curve")
    if c.operator is None or sweep is None:
        return None
    return part("sweep_curve", sweep, budget_report.envelope_view(sweep), caption=cap.SWEEP_CURVE_CAPTION)


#: The report's chapters and their sections, in the order it shows them: the operator's evidence
#: first (on Spark event logs Spark's own answer before it), then the paper's protocol, the appendices.
CHAPTERS: tuple[tuple[str, tuple[Section, ...]], ...] = (
    ("Spark's own rule on your event logs", (spark_settings,)),
    ("The operator's evidence: what copies buy for the machine time they cost",
     (matched_budgets, named_comparisons, operator_view, survival_verdict, cost_curve, reexecutions)),
    ("Reproducing the paper", (headline, table3, earliness, f1_over_time, completion_summary, completion,
                               protocol_ablation, nurd_sensitivity)),
    ("Appendices", (traces, sweep_curve, paper_table3)),
)
SECTIONS: tuple[Section, ...] = tuple(s for _, group in CHAPTERS for s in group)


def chapter_intro(c: Comparison, heading: str) -> str:
    """The words under a chapter's heading (run-specific where the run makes them so)."""
    if heading.startswith("The operator's"):
        return ("How the answer above was reached, under the operator's protocol: a flagged task gets a "
                "speculative copy, tau is estimated while the job runs, and every setting is chosen on earlier "
                "jobs before it is measured.")
    if heading.startswith("Reproducing"):
        absent = spark.paper_not_applicable(set() if c.given("operator_job_metrics") is None
                                            else set(c.get("operator_job_metrics")["trace"]))
        contrast = protocols_sentence(c.t3, c.operator) if c.paper else ""
        return " ".join(["The paper's protocol: the true tau is given, decisions stop at tau, and a flagged task "
                         "is killed and restarted.", contrast, *absent]).strip()
    return ""


def build_report(out_dir, tables: Mapping[str, pd.DataFrame | None], sections: Sequence[Section] = SECTIONS, *,
                 n_boot: int = 1000, seed: int = 0, completion_seeds=RELAUNCH_SEEDS,
                 notes: str | None = None) -> Report:
    """Render each of ``sections`` from ``tables`` (warehouse table name -> frame; see the module's
    docstring) and publish report.md, report.html, CSV, Parquet and PNG under ``out_dir``: the answer
    box first, then each section under its chapter, then the glossary."""
    chapter_of = {s: heading for heading, group in CHAPTERS for s in group}
    with tempfile.TemporaryDirectory() as d:
        c = Comparison(tables, Path(d), n_boot=n_boot, seed=seed, completion_seeds=completion_seeds)
        boxes = c.boxes
        whole = Part(tables={"answer": boxes_table(boxes)}, captions=dict(c.captions))
        chapters, opened = {}, set()
        for section in sections:
            got = section(c)
            if got is None:
                continue
            heading = chapter_of.get(section, "More tables")
            first = next(iter(got.tables), None)
            if first is not None and heading not in opened:
                opened.add(heading)
                chapters[first] = (heading, chapter_intro(c, heading))
            whole.tables.update(got.tables)
            whole.views.update(got.views)
            whole.plots.update(got.plots)
            whole.figures_after.update(got.figures_after)
            whole.figures_before.update(got.figures_before)
            whole.captions.update(got.captions)
            whole.text_after.update(got.text_after)
        methods = {m for name in ("job_metrics", "operator_job_metrics") if c.given(name) is not None
                   for m in c.get(name)["method"].unique()}
        path = write_report(out_dir, whole.tables, whole.plots, title=TITLE, notes=notes, markdown_tables=whole.views,
                            summary=boxes_markdown(boxes), captions=whole.captions,
                            figures_after=whole.figures_after, figures_before=whole.figures_before,
                            chapters=chapters, text_after=whole.text_after, files_only=("answer",),
                            terms=(*TERMS, *method_terms(methods)))
    out_dir = Path(out_dir)
    return Report(path, whole.tables, {name: out_dir / f"{name}.png" for name in whole.plots})
