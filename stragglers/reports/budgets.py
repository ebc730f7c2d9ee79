"""The operator's answer first: every method at every budget of extra machine time, and the comparison
named before it is scored.

From the engine's tables (stragglers/prediction/budgets.py): ``matched_budgets`` (each method tuned
on earlier jobs under the budget enforced at every check, Spark as Spark runs it, the headroom) and
``named_comparisons`` (the learned method and the free rule named on earlier jobs, or no winner, and
their difference on the scored jobs with its minimum detectable effect). One paragraph per trace,
the answer's table, the budget table for a reader, and the curves' figure. Plain pandas in; every
number from the tables.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.prediction.budgets import ENFORCED, SPARK_AS_RUN
from stragglers.prediction.engine.policies import DEFAULT_POINT, ORACLE
from stragglers.prediction.engine.spark_rule import SpeculationRule
from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.prediction.tuning import BUDGETS, HEADLINE_BUDGET, NO_COPY
from stragglers.reports import figures
from stragglers.reports.style import display_name, style_for
from stragglers.reports.views import jct_sentence, jct_words

SPARK = "spark_speculation"
#: the lines the figure names in its legend beside the free rules, the tuned rule and the oracle
LEGEND_LEARNED = 5


def pct(v, digits: int = 1) -> str:
    return "-" if v is None or pd.isna(v) else f"{v * 100:.{digits}f}%"


def pp_interval(lo, hi) -> str:
    return "" if pd.isna(lo) else f"[{lo * 100:+.1f}, {hi * 100:+.1f}]"


def spark_words(point: str) -> str:
    """'quantile 0.75, multiplier 1.5, minTaskRuntime 0.1 s' of a Spark sweep point ('none': no copy)."""
    if point in (NO_COPY, DEFAULT_POINT, "current"):
        return {NO_COPY: "no speculation", DEFAULT_POINT: "Spark 3's defaults", "current": "the setting it ran with"}[point]
    return SpeculationRule.from_point(point).words()


def point_words(method: str, point: str) -> str:
    if point == NO_COPY:
        return "no copy"
    if method == SPARK:
        return spark_words(point)
    return "its own rule" if point == DEFAULT_POINT else f"cut {point}"


def flags_equal(predictions: pd.DataFrame, reference: str = "flag_all") -> pd.DataFrame:
    """Per (trace, method): whether its flags equal ``reference``'s on every job both were scored on
    (the same tasks flagged at the same checkpoints; NURD's on these traces, for example)."""
    rows = []
    for trace, p in predictions.groupby("trace", sort=True):
        ref = p[p["method"] == reference][["job_id", "task_id", "flagged_at_s"]]
        if ref.empty:
            continue
        for method, g in p[p["method"] != reference].groupby("method", sort=True):
            both = g.merge(ref, on=["job_id", "task_id"], how="inner", suffixes=("", "_ref"))
            a, r = both["flagged_at_s"].to_numpy(float), both["flagged_at_s_ref"].to_numpy(float)
            same = len(both) > 0 and len(both) == len(g) and bool(
                np.all((np.isnan(a) & np.isnan(r)) | np.isclose(a, r)))
            rows.append((trace, method, same))
    return pd.DataFrame(rows, columns=["trace", "method", "flags_equal_flag_all"])


def pp(v, digits: int = 2) -> str:
    return "-" if v is None or pd.isna(v) else f"{v * 100:+.{digits}f} pp"


def best_in_words(words: str) -> str:
    """A naming in words (``verdict.Naming.words``) with the best candidate's display name."""
    head, sep, rest = words.partition("the best, ")
    if not sep:
        return words
    name, comma, tail = rest.partition(", ")
    return f"{head}{sep}{display_name(name)}{comma}{tail}"


def comparison_sentence(c) -> str:
    """One named comparison (a row of named_comparisons) in words: the pair named now, or no winner,
    and what the scored jobs show, with the effect they could have detected."""
    at = f"at {c.budget * 100:g}%"
    learned = (f"{display_name(c.learned)}" if isinstance(c.learned, str) and c.learned else
               f"no learned method (no winner: the best on earlier jobs, "
               f"{best_in_words(c.learned_words).split('the best, ')[-1]}".split(", cut")[0] + ")")
    free = display_name(c.free_rule) if isinstance(c.free_rule, str) and c.free_rule else "no free rule (no winner)"
    shown = (f"{at}, named {learned} against {free}: on the {int(c.n_scored)} scored jobs {pp(c.diff)} "
             f"[{pp(c.diff_lo)}, {pp(c.diff_hi)}], Holm p = {c.diff_p_holm:.2f}, an effect of {pp(c.diff_mde)} "
             f"or more would have been seen with 80% power")
    return shown + f" ({c.verdict})"


def named_comparison(comparisons: pd.DataFrame) -> str:
    """The pre-named comparison of one trace, in words: the split, then each budget's."""
    if comparisons is None or comparisons.empty:
        return ""
    first = comparisons.iloc[0]
    s = [f"Named before scoring ({first.scheme}): a job is scored once {int(first.warmup)} jobs ended before it "
         f"started, and each candidate is named on those jobs ({int(first.n_choosing_min)} to "
         f"{int(first.n_choosing_max)}) only where its mean cut there exceeds the smallest effect they can tell "
         f"from none (80% power); {int(first.n_scored)} jobs are scored."]
    each = "; ".join(comparison_sentence(c) for c in comparisons.sort_values("budget").itertuples(index=False))
    s.append(each[:1].upper() + each[1:] + ".")
    verdicts = comparisons["verdict"].tolist()
    if verdicts and all(v == "learned above" for v in verdicts):
        s.append("The pre-named learned method is above the pre-named free rule at every budget up to 5%.")
    else:
        s.append("The pre-named learned method is not above the pre-named free rule at every budget up to 5%; "
                 "every other method is exploration (the table below, Holm-adjusted intervals).")
    return " ".join(s)


def cheapest_sentence(curve: pd.DataFrame, budget: float = min(BUDGETS)) -> str:
    """One sentence on one trace's curves (``sweep.curve_table`` rows): the methods whose cheapest
    point that copies (mean extra machine time above 0) costs more than ``budget``, each with what
    its curve shows: one point (no score to cut), several cuts that copy exactly as much (its score
    is at the top of its range for every task it copies: no cut tells them apart), or its strictest
    cut that copies (a cut past it copies nothing: the grid spans the score, and what those copies
    cost is docs/EVALUATION.md's, "Cost curves"). '' when every method has a point within it. A
    point that copies nothing is within every budget and tells nothing, so it does not count."""
    said = []
    for method, g in curve[curve["method"] != ORACLE].groupby("method", sort=True):
        copying = np.sort(g["extra_machine_share"].to_numpy(float))
        copying = copying[copying > 0]
        if not len(copying) or copying[0] <= budget:
            continue
        why = ("one point, no score to cut" if len(g) == 1 else
               f"{int(np.isclose(copying, copying[0], rtol=0, atol=1e-9).sum())} of its cuts copy exactly that: "
               "its score is at the top of its range for every task they copy" if len(copying) > 1
               and np.isclose(copying[1], copying[0], rtol=0, atol=1e-9) else
               "its strictest cut that copies")
        said.append(f"{display_name(method)} ({pct(copying[0], 2)}; {why})")
    if not said:
        return ""
    return (f"Cheapest point that copies, above the smallest budget ({budget * 100:g}% extra machine time): "
            + ", ".join(said) + ".")


def _enforced(b: pd.DataFrame) -> pd.DataFrame:
    return b[b["cap_mode"] == ENFORCED] if "cap_mode" in b else b


def best_policy(at: pd.DataFrame) -> pd.Series | None:
    """The policy (no label reader, no oracle) tuned on earlier jobs with the largest cut at one budget."""
    ok = _enforced(at)
    ok = ok[~ok["reads_labels"].astype(bool) & (ok["method"] != ORACLE)]
    return None if ok.empty else ok.loc[ok["jct_reduction"].idxmax()]


def answer_paragraph(budgets: pd.DataFrame, comparisons: pd.DataFrame | None, curves: pd.DataFrame | None,
                     budget: float = HEADLINE_BUDGET) -> str:
    """One paragraph per trace: first the pre-named comparison (``named_comparison``), then the answer
    to "I can spend ``budget`` more machine time: what do I set, and what does it buy?" on the scored
    jobs; every number from ``budgets``, ``comparisons`` and ``curves``."""
    out = []
    for trace, b in budgets.groupby("trace", sort=True):
        at = b[b["budget"] == budget]
        if at.empty:
            continue
        comp = None if comparisons is None else comparisons[comparisons["trace"] == trace]
        s = [f"**{trace}** (operator's protocol; every setting tuned on the jobs that ended before each job).",
             named_comparison(comp), f"At {budget * 100:g}% extra machine time, on the scored jobs,"]
        spark = _enforced(at)[_enforced(at)["method"] == SPARK]
        if len(spark):
            r = spark.iloc[0]
            s.append(f"Spark's speculation tuned on earlier jobs, the budget enforced ({spark_words(r.point_mode)} "
                     f"most often), {jct_sentence(r.jct_reduction)} [{pct(r.jct_lo)}, {pct(r.jct_hi)}] for "
                     f"{pct(r.extra_machine_share, 2)} extra machine time;")
        run = at[at["cap_mode"] == SPARK_AS_RUN] if "cap_mode" in at else at.iloc[0:0]
        if len(run):
            r = run.iloc[0]
            s.append(f"as Spark runs it (no cap: the setting matched within the budget on earlier jobs, changed only "
                     f"where named) {jct_sentence(r.jct_reduction)} [{pct(r.jct_lo)}, {pct(r.jct_hi)}] for "
                     f"{pct(r.extra_machine_share, 2)} ({int(r.jobs_over_budget)} of {int(r.n_jobs)} jobs above the "
                     f"budget);")
        best = best_policy(at)
        if best is not None:
            s.append(f"the best policy tuned on earlier jobs here, {display_name(best.method)}, "
                     f"{jct_sentence(best.jct_reduction)} [{pct(best.jct_lo)}, {pct(best.jct_hi)}] for "
                     f"{pct(best.extra_machine_share, 2)};")
        if at["headroom"].notna().any():
            r = at.iloc[0]
            s.append(f"the headroom, per job the best of the oracle and of every point of every policy under the same "
                     f"cap at the same checks, {jct_sentence(r.headroom)} (the oracle alone "
                     f"{pct(r.oracle)}; some policy beat it on {int(r.oracle_beaten_jobs)} of {int(r.n_jobs)} "
                     f"jobs).")
        if "flags_equal_flag_all" in b:
            same = sorted(set(b[b["flags_equal_flag_all"].astype("boolean").fillna(False).astype(bool)]["method"]))
            if same:
                s.append("Flags identical to flag-all's on every job (the same copies at the same checks): "
                         + ", ".join(display_name(x) for x in same) + ".")
        if curves is not None:
            s.append(cheapest_sentence(curves[curves["trace"] == trace]))
        out.append(" ".join(x for x in s if x))
    return "\n\n".join(out)


def answer_table(budgets: pd.DataFrame, comparisons: pd.DataFrame | None,
                 budget: float = HEADLINE_BUDGET) -> pd.DataFrame:
    """The answer at ``budget``, per trace: Spark tuned on earlier jobs (the budget enforced) and as
    Spark runs it, the named learned method and free rule (or no winner), the best policy, the
    headroom."""
    rows = []
    for trace, b in budgets[budgets["budget"] == budget].groupby("trace", sort=True):
        comp = None if comparisons is None else comparisons[(comparisons["trace"] == trace)
                                                            & (comparisons["budget"] == budget)]
        picks = [("Spark tuned on earlier jobs, budget enforced", _enforced(b)[_enforced(b)["method"] == SPARK])]
        if "cap_mode" in b:
            picks.append(("Spark as Spark runs it (no cap)", b[b["cap_mode"] == SPARK_AS_RUN]))
        if comp is not None and len(comp):
            c = comp.iloc[0]
            for role, name in (("learned method named on earlier jobs", c.learned),
                               ("free rule named on earlier jobs", c.free_rule)):
                if isinstance(name, str) and name:
                    picks.append((role, _enforced(b)[_enforced(b)["method"] == name]))
                else:
                    rows.append({"trace": trace, "who": role, "method": "no winner", "setting (most chosen)": "",
                                 "jobs' completion time [95% CI]": "no copy", "extra machine": "0.00%"})
        best = best_policy(b)
        if best is not None:
            picks.append(("best policy tuned on earlier jobs", b.loc[[best.name]]))
        for role, r in picks:
            if r.empty:
                continue
            r = r.iloc[0]
            rows.append({"trace": trace, "who": f"{role} (at {budget * 100:g}%)", "method": display_name(r.method),
                         "setting (most chosen)": point_words(r.method, r.point_mode),
                         "jobs' completion time [95% CI]": f"{jct_words(r.jct_reduction)} [{pct(r.jct_lo)}, {pct(r.jct_hi)}]",
                         "extra machine": pct(r.extra_machine_share, 2)})
        if b["headroom"].notna().any():
            r = b.iloc[0]
            rows.append({"trace": trace, "who": f"headroom (at {budget * 100:g}%)", "method": "oracle and every policy",
                         "setting (most chosen)": "per job the best of the oracle and of every point of every policy",
                         "jobs' completion time [95% CI]": jct_words(r.headroom), "extra machine": ""})
    return pd.DataFrame(rows)


def comparison_view(comparisons: pd.DataFrame) -> pd.DataFrame:
    """The named comparisons for a reader: per trace and budget, who was named, how often, the
    difference on the scored jobs with its interval and detectable effect, the verdict."""
    rows = []
    for c in comparisons.sort_values(["trace", "budget"]).itertuples(index=False):
        def who(name, words, times):
            return (f"{display_name(name)} (named for {int(times)} of {int(c.n_scored)} jobs)"
                    if isinstance(name, str) and name else f"no winner ({best_in_words(words).split(': ', 1)[-1]})")
        rows.append({"trace": c.trace, "budget": f"{c.budget * 100:g}%",
                     "learned method named now": who(c.learned, c.learned_words, c.learned_named_jobs),
                     "free rule named now": who(c.free_rule, c.free_rule_words, c.free_rule_named_jobs),
                     "scored jobs": int(c.n_scored),
                     "learned minus free rule [Holm 95%]": f"{pp(c.diff)} [{pp(c.diff_lo)}, {pp(c.diff_hi)}]",
                     "detectable (80% power)": pp(c.diff_mde), "Holm p": f"{c.diff_p_holm:.2f}",
                     "verdict": c.verdict})
    return pd.DataFrame(rows)


def budget_view(budgets: pd.DataFrame) -> pd.DataFrame:
    """The budget table for a reader: per trace and budget, each method tuned on earlier jobs, its
    spend against the budget, against the free rule named now and the tuned Spark rule (Holm)."""
    rows = []
    order = budgets.assign(learned=budgets["method"].map(is_learned))
    order = order.sort_values(["trace", "budget", "learned", "jct_reduction"], ascending=[True, True, True, False])
    for r in order.itertuples(index=False):
        label = display_name(r.method) + ("" if r.learned else " (free rule)" if r.method in FREE_RULES
                                          else " (reads labels)")
        if getattr(r, "cap_mode", ENFORCED) == SPARK_AS_RUN:
            label += ", as Spark runs it (no cap)"
        rows.append({
            "trace": r.trace, "budget": f"{r.budget * 100:g}%", "method": label,
            "setting (most chosen)": point_words(r.method, r.point_mode),
            "JCT, tuned on earlier jobs": f"{jct_words(r.jct_reduction) or 'no change'} [{pct(r.jct_lo)}, {pct(r.jct_hi)}]",
            "extra machine (x budget)": f"{pct(r.extra_machine_share, 2)} ({r.spend_over_budget:.2f}x)",
            "vs free rule named now (Holm)": ("" if pd.isna(r.diff) else f"{pp(r.diff)} [{pp(r.diff_lo)}, {pp(r.diff_hi)}]"),
            "vs tuned Spark (Holm)": ("" if pd.isna(r.spark_diff)
                                      else f"{pp(r.spark_diff)} [{pp(r.spark_diff_lo)}, {pp(r.spark_diff_hi)}]"),
            "best point in hindsight": f"{jct_words(r.in_sample_jct_reduction) or 'no change'}",
            "area to 5%": pct(r.area_to_5pct, 2),
        })
    return pd.DataFrame(rows)


def plot_budget_curves(curves: pd.DataFrame, budgets: pd.DataFrame, path, x_max: float = 0.1) -> Path:
    """Per trace: each method's best JCT cut against extra machine time (the upper envelope of its
    sweep, a step line up to ``x_max``); free rules dashed, the tuned Spark rule bold (its outcome at
    each budget), the oracle a star. Named in the legend: the free rules, the tuned rule, the oracle
    and the ``LEGEND_LEARNED`` learned methods with the largest area to 5%; the others thin grey."""
    plt = figures._plt()
    traces = sorted(curves["trace"].unique())
    fig, axes = plt.subplots(len(traces), 1, figsize=(11.0, 5.2 * max(1, len(traces))), squeeze=False)
    for ax, trace in zip(axes[:, 0], traces):
        c = curves[curves["trace"] == trace]
        b = budgets[budgets["trace"] == trace]
        area = _enforced(b).groupby("method")["area_to_5pct"].first()
        learned = [m for m in area.sort_values(ascending=False).index if is_learned(m)]
        named = set(learned[:LEGEND_LEARNED]) | {"nurd"}
        xs = np.linspace(0, x_max, 201)
        for method, g in c.groupby("method", sort=True):
            if method == ORACLE:
                continue
            ex, jc = g["extra_machine_share"].to_numpy(), g["jct_reduction"].to_numpy()
            env = [max([0.0] + [y for x, y in zip(ex, jc) if x <= v + 1e-12]) for v in xs]
            st = style_for(method)
            if method in FREE_RULES:
                ax.plot(xs * 100, np.array(env) * 100, linestyle="--", color=st.color, linewidth=1.4,
                        label=f"{display_name(method)} (free rule, its sweep)")
            elif method in named:
                ax.plot(xs * 100, np.array(env) * 100, color=st.color, linewidth=1.6, label=display_name(method))
            else:
                ax.plot(xs * 100, np.array(env) * 100, color="0.75", linewidth=0.7, zorder=1)
        tuned = _enforced(b)[_enforced(b)["method"] == SPARK].sort_values("budget")
        if len(tuned):
            ax.plot(tuned["extra_machine_share"] * 100, tuned["jct_reduction"] * 100, color="black", linewidth=3.0,
                    marker="o", label="Spark tuned on earlier jobs (at 0.5, 1, 2, 5%)", zorder=5)
        head = (b.groupby("budget")["headroom"].first().dropna() if "headroom" in b else pd.Series(dtype=float))
        if len(head):
            ax.plot(head.index * 100, head.to_numpy() * 100, color="goldenrod", linewidth=2.0, marker="*",
                    markersize=12, label="oracle under the same cap (headroom, at 0.5, 1, 2, 5%)", zorder=6)
        orc = c[c["method"] == ORACLE]
        if len(orc):
            o = orc.iloc[0]
            ax.scatter([min(o.extra_machine_share, x_max) * 100], [o.jct_reduction * 100], marker="*", s=220,
                       color="gold", edgecolor="black", zorder=6,
                       label=f"oracle ({o.extra_machine_share * 100:.1f}% extra)")
        for bud in sorted(b["budget"].unique()):
            ax.axvline(bud * 100, color="0.85", linewidth=0.8, zorder=0)
        ax.set_xlim(0, x_max * 100)
        ax.set_xlabel("extra machine time (% of the jobs' own)")
        ax.set_ylabel("jobs' completion time shortened by (%)")
        ax.set_title(f"{trace}: the best cut each method reaches within a budget of extra machine time "
                     "(grey: other methods)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return figures._save(plt, fig, path)


def answer_text(budgets: pd.DataFrame, comparisons: pd.DataFrame | None, curves: pd.DataFrame | None) -> list[str]:
    """The paragraphs for the terminal (README command 1), Markdown bold removed."""
    return [p.replace("**", "") for p in answer_paragraph(budgets, comparisons, curves).split("\n\n") if p]
