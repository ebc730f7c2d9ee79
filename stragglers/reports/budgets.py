"""The operator's answer first: every method at every budget of extra machine time.

From the sweep's per-job outcomes (stragglers/prediction/sweep.py, table ``operator_sweep_outcomes``):
one paragraph per trace, opening with the comparison named before scoring (the learned method and
the free rule chosen on the jobs that ended first, compared on the others), then "At 2% extra
machine time, Spark tuned on earlier jobs shortens these jobs by x% [CI]; the pre-named learned
method, M, by y% [CI]; the oracle's headroom is z%"; one figure (JCT
cut against extra machine time: one line per method, the free rules dashed, the tuned Spark rule
bold, the oracle a point, a legend instead of labels on the lines so none overlap) and the
matched-budget table. Plain pandas in; every number from the tables.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.prediction.methods.rules import spark_setting
from stragglers.prediction.sweep import (
    BUDGETS, DEFAULT_POINT, HEADLINE_BUDGET, NAMED_FREE_RULE, NAMED_LEARNED, NO_COPY, ORACLE,
)
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
    if point in (NO_COPY, DEFAULT_POINT):
        return "no speculation" if point == NO_COPY else "Spark's defaults"
    q, m, mn = spark_setting(f"{SPARK}@{point}")
    return f"quantile {q:g}, multiplier {m:g}, minTaskRuntime {mn:g} s"


def point_words(method: str, point: str) -> str:
    if point == NO_COPY:
        return "no copy"
    if method == SPARK:
        return spark_words(point)
    return "its own rule" if point == DEFAULT_POINT else f"cut {point}"


def verdict(r) -> str:
    """Above / below the pre-named free rule at the budget, or a tie (the Holm-adjusted interval holds 0)."""
    if pd.isna(r.diff_lo):
        return "the reference" if r.method == r.reference else ""
    if r.diff_lo > 0:
        return "above"
    if r.diff_hi < 0:
        return "below"
    return "tie"


def named_rows(budgets: pd.DataFrame, role: str) -> pd.DataFrame:
    """Per budget, the row of the method named on the choosing half in ``role`` (sweep.NAMED_*)."""
    return budgets[budgets["named"] == role].sort_values("budget")


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


def named_comparison(b: pd.DataFrame) -> str:
    """The pre-named comparison of one trace, in words: which two methods the choosing half named
    at each budget, and their paired difference on the scored half."""
    learned, free = named_rows(b, NAMED_LEARNED), named_rows(b, NAMED_FREE_RULE).set_index("budget")
    if learned.empty:
        return ""
    first = b.iloc[0]
    how = ("the budget enforced at every decision, each copy on a lease: no job spends above it"
           if bool(first.get("enforced", False)) else "the budget matched on earlier jobs' spend")
    s = [f"Named before scoring, on the {int(first.n_jobs_choosing)} jobs that ended first, and scored on the other "
         f"{int(first.n_jobs)} ({how}): the learned method against the free rule with the largest tuned mean there,"]
    parts, signs = [], []
    for r in learned.itertuples(index=False):
        ref = free.loc[r.budget] if r.budget in free.index else None
        spend = "" if ref is None else f" for {pct(r.extra_machine_share, 2)} against {pct(ref.extra_machine_share, 2)}"
        d = ("" if pd.isna(r.named_diff_lo) else
             f" {r.named_diff * 100:+.1f} pp {pp_interval(r.named_diff_lo, r.named_diff_hi)}")
        parts.append(f"at {r.budget * 100:g}% {display_name(r.method)} minus {display_name(r.reference)}{d}{spend}")
        signs.append("above" if r.named_diff_lo > 0 else "below" if r.named_diff_hi < 0 else "tie")
    s.append("; ".join(parts) + " extra machine time (paired 95% intervals over the scored jobs).")
    if signs and all(x == "above" for x in signs):
        s.append("The pre-named learned method is above the pre-named free rule at every budget up to 5%.")
    else:
        s.append("The pre-named learned method is not above the pre-named free rule at every budget up to 5% ("
                 + ", ".join(f"{x} at {r.budget * 100:g}%" for x, r in zip(signs, learned.itertuples(index=False)))
                 + "); every other method is exploration (the table below, Holm-adjusted intervals).")
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


def answer_paragraph(budgets: pd.DataFrame, curves: pd.DataFrame, budget: float = HEADLINE_BUDGET) -> str:
    """One paragraph per trace: first the pre-named comparison (``named_comparison``), then the
    answer to "I can spend ``budget`` more machine time: what do I set, and what does it buy?" on
    the scored jobs; every number from ``budgets`` (``sweep.budget_table``, with
    ``flags_equal_flag_all`` when known) and ``curves``."""
    out = []
    for trace, b in budgets.groupby("trace", sort=True):
        at = b[b["budget"] == budget]
        if at.empty:
            continue
        s = [f"**{trace}** (operator's protocol; every setting tuned on the jobs that ended before each job).",
             named_comparison(b), f"At {budget * 100:g}% extra machine time, on the scored jobs,"]
        spark = at[at["method"] == SPARK]
        if len(spark):
            r = spark.iloc[0]
            setting = ("turns speculation off (no setting kept earlier jobs within the budget) and"
                       if r.point_mode == NO_COPY else f"with {spark_words(r.point_mode)} (its setting most chosen)")
            s.append(f"Spark's speculation tuned on earlier jobs {setting} {jct_sentence(r.jct_reduction)} "
                     f"[{pct(r.jct_lo)}, {pct(r.jct_hi)}] for {pct(r.extra_machine_share)} extra machine time;")
        else:
            s.append("Spark's rule was not evaluated on this trace;")
        m = named_rows(at, NAMED_LEARNED)
        if len(m):
            m = m.iloc[0]
            s.append(f"the pre-named learned method, {display_name(m.method)} ({point_words(m.method, m.point_mode)}), "
                     f"{jct_sentence(m.jct_reduction)} [{pct(m.jct_lo)}, {pct(m.jct_hi)}] for "
                     f"{pct(m.extra_machine_share)};")
        orc = curves[(curves["trace"] == trace) & (curves["method"] == ORACLE)]
        if "headroom" in at and at["headroom"].notna().any():
            s.append("the oracle under the same cap (the tasks that truly end last copied first, where the copy wins), "
                     f"the headroom at this budget, {jct_sentence(at['headroom'].dropna().iloc[0])}.")
        elif len(orc):
            o = orc.iloc[0]
            s.append(f"the oracle's headroom is {pct(o.jct_reduction)} (every true straggler copied at the first "
                     f"checkpoint, for {pct(o.extra_machine_share)} extra machine time).")
        same = (sorted(set(b[b["flags_equal_flag_all"].astype("boolean").fillna(False).astype(bool)]["method"]))
                if "flags_equal_flag_all" in b else [])
        if same:
            s.append("Flags identical to flag-all's on every job (the same copies at the same checkpoints): "
                     + ", ".join(display_name(x) for x in same) + ".")
        if curves is not None:
            s.append(cheapest_sentence(curves[curves["trace"] == trace]))
        out.append(" ".join(x for x in s if x))
    return "\n\n".join(out)


def answer_table(budgets: pd.DataFrame, curves: pd.DataFrame, budget: float = HEADLINE_BUDGET) -> pd.DataFrame:
    """The answer at ``budget``, per trace: the tuned Spark rule, the best learned method, the best
    free rule when it is not Spark's, and the oracle (its own point: its cost is what it is)."""
    rows = []
    for trace, b in budgets[budgets["budget"] == budget].groupby("trace", sort=True):
        picks = [("Spark tuned on earlier jobs", b[b["method"] == SPARK]),
                 ("pre-named learned method", named_rows(b, NAMED_LEARNED))]
        ref = named_rows(b, NAMED_FREE_RULE)
        if len(ref) and ref.iloc[0].method != SPARK:
            picks.append(("pre-named free rule", ref))
        for role, r in picks:
            if r.empty:
                continue
            r = r.iloc[0]
            rows.append({"trace": trace, "who": f"{role} (at {budget * 100:g}%)",
                         "method": display_name(r.method), "setting (most chosen)": point_words(r.method, r.point_mode),
                         "jobs' completion time [95% CI]": f"{jct_words(r.jct_reduction)} [{pct(r.jct_lo)}, {pct(r.jct_hi)}]",
                         "extra machine": pct(r.extra_machine_share, 2),
                         "minus the pre-named free rule [paired 95% CI]": (
                             "" if pd.isna(r.named_diff) else
                             f"{r.named_diff * 100:+.1f} pp {pp_interval(r.named_diff_lo, r.named_diff_hi)}")})
        orc = curves[(curves["trace"] == trace) & (curves["method"] == ORACLE)]
        if "headroom" in b and b["headroom"].notna().any():
            rows.append({"trace": trace, "who": f"headroom (the oracle under the same cap, at {budget * 100:g}%)",
                         "method": display_name(ORACLE),
                         "setting (most chosen)": "the tasks that truly end last copied first, where the copy wins",
                         "jobs' completion time [95% CI]": jct_words(b["headroom"].dropna().iloc[0]),
                         "extra machine": "", "minus the pre-named free rule [paired 95% CI]": ""})
        elif len(orc):
            o = orc.iloc[0]
            rows.append({"trace": trace, "who": "headroom (its own point)", "method": display_name(ORACLE),
                         "setting (most chosen)": "every true straggler at the first checkpoint",
                         "jobs' completion time [95% CI]": jct_words(o.jct_reduction),
                         "extra machine": pct(o.extra_machine_share, 2),
                         "minus the pre-named free rule [paired 95% CI]": ""})
    return pd.DataFrame(rows)


def budget_view(budgets: pd.DataFrame) -> pd.DataFrame:
    """The matched-budget table for a reader: per trace and budget, each method tuned on earlier jobs
    against the best free rule, the interval, the verdict, and the curve's in-sample best."""
    rows = []
    order = budgets.assign(learned=budgets["method"].map(is_learned))
    order = order.sort_values(["trace", "budget", "learned", "jct_reduction"], ascending=[True, True, True, False])
    for r in order.itertuples(index=False):
        rows.append({
            "trace": r.trace, "budget": f"{r.budget * 100:g}%",
            "method": display_name(r.method) + ("" if r.learned else " (free rule)" if r.method in FREE_RULES
                                                else " (reads labels)") + (f", pre-named {r.named}" if r.named else ""),
            "setting (most chosen)": point_words(r.method, r.point_mode),
            "JCT, tuned on earlier jobs": f"{jct_words(r.jct_reduction) or 'no change'} [{pct(r.jct_lo)}, {pct(r.jct_hi)}]",
            "extra machine": pct(r.extra_machine_share, 2),
            "vs pre-named free rule (Holm)": (verdict(r) if pd.isna(r.diff) else
                                              f"{verdict(r)}: {r.diff * 100:+.2f} pp {pp_interval(r.diff_lo, r.diff_hi)}"),
            "vs tuned Spark (Holm)": ("" if pd.isna(r.spark_diff)
                                      else f"{r.spark_diff * 100:+.2f} pp {pp_interval(r.spark_diff_lo, r.spark_diff_hi)}"),
            "chosen on (first half)": pct(r.choosing_jct_reduction),
            "curve's best (same jobs)": f"{jct_words(r.in_sample_jct_reduction) or 'no change'}",
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
        area = b.groupby("method")["area_to_5pct"].first()
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
        tuned = b[b["method"] == SPARK].sort_values("budget")
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


def answer_text(budgets: pd.DataFrame, curves: pd.DataFrame) -> list[str]:
    """The paragraphs for the terminal (README command 1), Markdown bold removed."""
    return [p.replace("**", "") for p in answer_paragraph(budgets, curves).split("\n\n") if p]
