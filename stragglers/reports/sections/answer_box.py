"""The answer box: what the report's first screen says for each trace, in plain words.

Per trace: what to run (a setting, "no speculation", or "no learned method beats the free rule
here"), what it buys (the cut in job completion time with its 95% interval), what it costs (extra
machine time) and how many jobs it rests on; then one line for the researcher (NURD's F1 here beside
the paper's). Where it comes from, at the report's budget (``tuning.HEADLINE_BUDGET``):

- on cluster traces, table ``named_comparisons`` (the learned method and the free rule named on
  earlier jobs, or no winner, with the effect the jobs could have detected) and ``matched_budgets``
  (each method tuned on earlier jobs with the budget enforced, Spark's rule tuned, the headroom);
- on Spark event logs, ``spark_answer`` and ``spark_answer_rows`` (the verdict, the
  spark-defaults.conf block, what runs, Spark 4.0's defaults and the answer side by side).

The same rows are the report's table ``answer`` (answer.csv), which the terminal summary prints:
the box and the summary cannot disagree. Plain pandas in, ``Box`` out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pandas as pd

from stragglers.prediction.verdicts.budgets import ENFORCED
from stragglers.prediction.verdicts.spark_answer import change
from stragglers.prediction.verdicts.tuning import HEADLINE_BUDGET
from stragglers.prediction.verdicts.verdict import WARMUP_JOBS
from stragglers.reports.sections.paper import PAPER_TABLE3
from stragglers.reports.page.style import display_name
from stragglers.reports.page.words import SPARK, cut_words, interval, pct, pp
from stragglers.trace_formats import FORMATS

ANSWER_COLUMNS = ["trace", "item", "text"]


@dataclass
class Box:
    """One trace's answer: a title (what to run, in a few words), labelled lines, a config block."""
    trace: str
    title: str
    lines: list[tuple[str, str]] = field(default_factory=list)
    conf: str = ""

    def rows(self) -> list[dict]:
        out = [{"trace": self.trace, "item": "answer", "text": self.title}]
        out += [{"trace": self.trace, "item": label, "text": text} for label, text in self.lines]
        if self.conf:
            out.append({"trace": self.trace, "item": "spark-defaults.conf", "text": self.conf.rstrip()})
        return out


def _at(df: pd.DataFrame | None, trace: str, budget: float) -> pd.DataFrame:
    if df is None or not len(df):
        return pd.DataFrame()
    return df[(df["trace"] == trace) & ((df["budget"] - budget).abs() < 1e-12)]


def _named(name) -> bool:
    return isinstance(name, str) and bool(name)


def _trace_words(trace: str, n_jobs: int | None, unit: str = "jobs") -> str:
    fmt = FORMATS.get(trace)
    kind = "generated trace" if fmt is not None and fmt.embedded else "real trace"
    if fmt is not None and fmt.layout == "spark":
        kind = "Spark event logs"
    return f"{kind}, {n_jobs} {unit}" if n_jobs else kind


def _buys(cut, lo, hi, unit: str = "jobs") -> str:
    if cut is None or pd.isna(cut) or abs(cut) < 5e-4:
        return f"nothing measurable: {unit} end as they do without copies" + (
            f" (95% interval {interval(lo, hi)})" if not pd.isna(lo) and (lo != 0 or hi != 0) else "")
    return f"{unit} finish {pct(cut)} sooner on average (95% interval {interval(lo, hi)})"


def _best(comp, side: str, unit: str = "jobs") -> str:
    """The best candidate of one side ('learned' or 'free_rule') on the earlier jobs, with its gain and
    the smallest gain those jobs could detect: '{name}, 0.05% (detectable: 0.15%)'."""
    words = getattr(comp, f"{side}_words")
    if not isinstance(words, str) or "the best, " not in words:
        return ""
    name = display_name(words.split("the best, ", 1)[1].split(", ", 1)[0])
    mean, mde = getattr(comp, f"{side}_mean"), getattr(comp, f"{side}_mde")
    if pd.isna(mean) or abs(mean) < 5e-5:
        return f"{name}, gained nothing"
    return f"{name}, gained {pct(mean, 2)}, less than the {pct(mde, 2)} those {unit} can detect"


def operator_box(trace: str, budgets: pd.DataFrame, comp: pd.Series | None, n_jobs: int | None,
                 budget: float) -> Box:
    """The answer from the budget tables at ``budget`` (module doc)."""
    enforced = budgets[budgets["cap_mode"] == ENFORCED] if "cap_mode" in budgets else budgets
    at = f"{budget * 100:g}% extra machine time"
    n_scored = int(comp.n_scored) if comp is not None else int(budgets["n_jobs"].max())

    def row(method):
        r = enforced[enforced["method"] == method]
        return None if r.empty else SimpleNamespace(**r.iloc[0].to_dict())

    learned = comp.learned if comp is not None and _named(comp.learned) else None
    free = comp.free_rule if comp is not None and _named(comp.free_rule) else None
    run = learned if learned is not None and comp.verdict == "learned above" else free
    box = Box(trace, "")
    if run is not None and row(run) is not None:
        r = row(run)
        name = "Spark's speculation, tuned" if run == SPARK else display_name(run)
        box.title = f"run {name}"
        box.lines.append(("What to run", f"{display_name(run)}: {cut_words(run, r.point_mode)} (the setting most "
                                         f"often chosen; each job gets the one that did best within {at} on the "
                                         f"jobs before it)."))
        box.lines.append(("What it buys", _buys(r.jct_reduction, r.jct_lo, r.jct_hi) + "."))
        box.lines.append(("What it costs", f"{pct(r.extra_machine_share, 2)} extra machine time (the budget: "
                                           f"{budget * 100:g}%)."))
    else:
        box.title = "leave speculation off"
        box.lines.append(("What to run", "no speculation."))
        upto = f" (up to {int(comp.n_choosing_max)} of them)" if comp is not None else ""
        why = (f"within {at}, no method, learned or free rule, shortened the earlier jobs{upto} by more than they "
               f"could tell from chance")
        if comp is not None:
            picks = [f"the best {kind} there, {best}" for kind, best in
                     (("free rule", _best(comp, "free_rule")), ("learned method", _best(comp, "learned"))) if best]
            why += (": " + "; ".join(picks)) if picks else ""
        box.lines.append(("Why", why + "."))
        box.lines.append(("What it buys", "nothing, and nothing is lost: jobs end as they do today."))
        box.lines.append(("What it costs", "no extra machine time."))
    lo, hi = (int(comp.n_choosing_min), int(comp.n_choosing_max)) if comp is not None else (WARMUP_JOBS, None)
    of = f" of {n_jobs}" if n_jobs else ""
    box.lines.append(("Rests on", f"{n_scored} scored jobs{of}, each judged with only the {lo} to {hi} jobs that "
                                  f"ended before it started."))
    learned_line = _learned_line(comp, learned, free, run)
    if learned_line:
        box.lines.append(("Learned methods", learned_line))
    spark = row(SPARK)
    if run != SPARK and spark is not None and not pd.isna(spark.jct_reduction) and spark.jct_reduction > 0:
        reaches_zero = round(spark.jct_lo * 100, 1) <= 0     # as the interval is printed, to one decimal
        box.lines.append(("Spark's rule tuned anyway", f"{cut_words(SPARK, spark.point_mode)}: "
                                                       f"{_buys(spark.jct_reduction, spark.jct_lo, spark.jct_hi)}, for "
                                                       f"{pct(spark.extra_machine_share, 2)} extra machine time"
                                                       + ("; its interval reaches 0." if reaches_zero else ".")))
    if "headroom" in budgets and budgets["headroom"].notna().any():
        box.lines.append(("The most copies could buy", f"jobs {pct(budgets['headroom'].dropna().iloc[0])} sooner "
                                                       f"(the headroom), if the stragglers were known in advance."))
    return box


def _learned_line(comp, learned, free, run) -> str | None:
    if comp is None:
        return "not compared (no named comparison in this run)."
    if learned is not None and run == learned:
        return (f"{display_name(learned)} beats the free rule {display_name(free) if free else 'named with it'}: "
                f"{pp(comp.diff)} [{pp(comp.diff_lo)}, {pp(comp.diff_hi)}] on the scored jobs (Holm-adjusted).")
    if learned is not None:
        other = f"the free rule {display_name(free)}" if free else "no copy"
        return (f"no learned method beats {other} here: {display_name(learned)}, named on the earlier jobs, differs by "
                f"{pp(comp.diff)} [{pp(comp.diff_lo)}, {pp(comp.diff_hi)}] (verdict: {comp.verdict}).")
    if free is None:
        return None          # nothing named on either side: the line "Why" says it
    best = _best(comp, "learned")
    return ("no learned method beats the free rule here: none gained more on the earlier jobs than they could tell "
            "from chance" + (f" (the best, {best})." if best else "."))


def spark_box(head: pd.Series, rows: pd.DataFrame, comp=None) -> Box:
    """The answer from table spark_answer's row and its spark_answer_rows (module doc), with the learned
    methods' named comparison (``comp``, a row of named_comparisons) where the learned chain ran."""
    verdict = str(head.verdict)
    title, _, why = verdict.partition(": ")
    box = Box(head.trace, title[:1].lower() + title[1:], conf=str(head.conf))
    follow = rows[rows["who"] == "following this answer"]
    box.lines.append(("What to run", title[:1].lower() + title[1:] + "."))
    if why:
        box.lines.append(("Why", why))
    if len(follow):
        f = follow.iloc[0]
        box.lines.append(("What it buys", _buys(f.cut, f.cut_lo, f.cut_hi, unit="stages")
                          + " (following this answer on the later stages)."))
        box.lines.append(("What it costs", f"{pct(f.extra, 2)} extra executor time, {f.copies:.1f} copies per stage."))
    box.lines.append(("Rests on", f"{int(head.stages)} stages of {int(head.applications)} applications; the "
                                  f"{int(head.scored)} later stages score it, each with the setting chosen on the "
                                  f"stages that ended before it started."))
    box.lines.append(("You run", f"{head.current}."))
    defaults = rows[rows["who"] == "Spark 4.0's defaults"]
    if len(defaults):
        d = defaults.iloc[0]
        box.lines.append(("Spark 4.0's defaults", f"{d.setting}: stage time {change(d.cut)} "
                                                  f"[{change(d.cut_hi)}, {change(d.cut_lo)}] for {pct(d.extra, 2)} "
                                                  f"extra executor time."))
    if comp is not None:
        learned = comp.learned if _named(comp.learned) else None
        free = comp.free_rule if _named(comp.free_rule) else None
        line = _learned_line(comp, learned, free, learned if comp.verdict == "learned above" else free)
        if line is None:
            picks = [f"the best {kind} on the earlier stages, {best}" for kind, best in
                     (("learned method", _best(comp, "learned", "stages")),
                      ("free rule", _best(comp, "free_rule", "stages"))) if best]
            line = "none named (no winner)" + (": " + "; ".join(picks) if picks else "") + "."
        box.lines.append(("Learned methods", line))
    return box


def researcher_line(trace: str, paper_t3: pd.DataFrame | None, operator_t3: pd.DataFrame | None,
                    features: str = "usage") -> str | None:
    """NURD's F1 here (the paper's protocol where it ran, else the operator's) beside the paper's, and
    what the methods saw where it was not the paper's usage samples (``features``)."""
    for t3, protocol in ((paper_t3, "the paper's protocol"), (operator_t3, "the operator's protocol")):
        if t3 is None or not len(t3):
            continue
        r = t3[(t3["trace"] == trace) & (t3["method"] == "nurd")]
        if r.empty:
            continue
        r = r.iloc[0]
        ci = f" [{r.f1_lo:.2f}, {r.f1_hi:.2f}]" if "f1_lo" in r and not pd.isna(r.f1_lo) else ""
        paper = PAPER_TABLE3[PAPER_TABLE3["method"] == "nurd"].set_index("paper_trace")["f1"]
        column = FORMATS[trace].paper_column if trace in FORMATS else None
        if column in paper and trace in FORMATS and not FORMATS[trace].embedded:
            theirs = f"the paper: {paper[column]:.2f} on the same trace"
            if "usage" not in features:
                seen = features.replace("events", "event")
                theirs += f", measured with the tasks' usage samples where these methods saw {seen} features"
        else:
            theirs = (f"the paper: {paper['google']:.2f} on Google's 2011 trace and {paper['alibaba']:.2f} on "
                      f"Alibaba's; this trace is not theirs, so the two compare the method, not the data")
        why = FORMATS[trace].paper_protocol_not_applicable if trace in FORMATS else ""
        absent = f" {why[:1].upper() + why[1:]}." if why and t3 is operator_t3 else ""
        return f"NURD's F1 here is {r.f1:.2f}{ci} under {protocol} ({theirs}).{absent}"
    return None


def answer_boxes(tables, budget: float = HEADLINE_BUDGET, operator_t3: pd.DataFrame | None = None,
                 paper_t3: pd.DataFrame | None = None) -> list[Box]:
    """One box per trace of the run (``tables``: the report's tables by warehouse name)."""
    def get(name):
        df = tables.get(name)
        return df if df is not None and len(df) else None

    budgets, comps = get("matched_budgets"), get("named_comparisons")
    heads, rows = get("spark_answer"), get("spark_answer_rows")
    traces = sorted({t for name in ("job_metrics", "operator_job_metrics", "spark_answer", "matched_budgets")
                     if get(name) is not None for t in get(name)["trace"].unique()})
    boxes = []
    for trace in traces:
        n_jobs = _count(trace, tables)
        head = _at(heads, trace, budget)
        at = _at(budgets, trace, budget)
        comp = _at(comps, trace, budget)
        # a namespace, not a Series: a column named diff is not Series.diff
        comp = SimpleNamespace(**comp.iloc[0].to_dict()) if len(comp) else None
        if len(head):
            box = spark_box(head.iloc[0], _at(rows, trace, budget), comp)
        elif len(at):
            box = operator_box(trace, at, comp, n_jobs, budget)
        elif operator_t3 is not None and (operator_t3["trace"] == trace).any():
            box = Box(trace, "too few jobs to answer", [(
                "Why", f"a setting is scored on a job only once {WARMUP_JOBS} jobs ended before it started, and "
                       f"no job of these {n_jobs} has that many; what each method does at its own default, on every "
                       f"job and not tuned, is in the operator's view below.")])
        else:
            box = Box(trace, "the operator's question was not asked in this run",
                      [("Why", "only the paper's protocol ran (no operator's protocol tables): its numbers follow.")])
        traces_df = get("traces")
        seen = (traces_df.loc[traces_df["trace"] == trace, "features"] if traces_df is not None
                and "features" in traces_df else pd.Series(dtype=object))
        line = researcher_line(trace, paper_t3, operator_t3, str(seen.iloc[0]) if len(seen) else "usage")
        if line:
            box.lines.append(("For the researcher", line))
        unit = "stages" if FORMATS.get(trace) is not None and FORMATS[trace].layout == "spark" else "jobs"
        box.title = f"{trace} ({_trace_words(trace, n_jobs, unit)}): {box.title}"
        boxes.append(box)
    return boxes


def _count(trace: str, tables) -> int | None:
    """The jobs of ``trace`` evaluated (the operator's protocol's where it ran)."""
    for name in ("operator_job_metrics", "job_metrics"):
        df = tables.get(name)
        if df is not None and len(df) and (df["trace"] == trace).any():
            return int(df.loc[df["trace"] == trace, "job_id"].nunique())
    return None


def boxes_markdown(boxes: list[Box]) -> str:
    """The boxes as report.md shows them: a heading per trace, a list of labelled lines, the block."""
    out = []
    for b in boxes:
        out += [f"### {b.title}", ""]
        out += [f"- **{label}:** {text}" for label, text in b.lines]
        if b.conf:
            out += ["", "```", b.conf.rstrip(), "```"]
        out.append("")
    return "\n".join(out).rstrip()


def boxes_table(boxes: list[Box]) -> pd.DataFrame:
    return pd.DataFrame([r for b in boxes for r in b.rows()], columns=ANSWER_COLUMNS)


def box_lines(answer: pd.DataFrame) -> list[str]:
    """The table ``answer`` (answer.csv) as terminal lines: the title, then each labelled line."""
    out = []
    for trace, g in answer.groupby("trace", sort=False):
        for r in g.itertuples(index=False):
            if r.item == "answer":
                out.append(r.text)
            elif r.item == "spark-defaults.conf":
                out += ["  " + line for line in str(r.text).splitlines()]
            else:
                out.append(f"  {r.item}: {r.text}")
    return out
