"""The operator's evidence: every method at every budget of extra machine time, and the comparison
named before it is scored (the answer box itself: stragglers.reports.sections.answer_box).

From the engine's tables (stragglers/prediction/verdicts/budgets.py): ``matched_budgets`` (each method tuned
on earlier jobs under the budget enforced at every check, Spark as Spark runs it, the headroom) and
``named_comparisons`` (the learned method and the free rule named on earlier jobs, or no winner, and
their difference on the scored jobs with its minimum detectable effect). The paragraph in words, the
budget table and the named comparisons for a reader (the curves' figure: budget_figure.py). Plain
pandas in; every number from the tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stragglers.prediction.verdicts.budgets import ENFORCED, SPARK_AS_RUN
from stragglers.prediction.engine.policies import ORACLE
from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.prediction.verdicts.tuning import BUDGETS, HEADLINE_BUDGET
from stragglers.reports.page.style import display_name
from stragglers.reports.page.views import jct_sentence, jct_words
from stragglers.reports.page.words import SPARK, cut_words, natural_key, pct, pp, spark_words


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
    if c.verdict == "no winner" and not (isinstance(c.free_rule, str) and c.free_rule):
        return f"{at}, nothing named on either side (no winner): no copy, nothing to compare"
    shown = (f"{at}, named {learned} against {free}: on the {int(c.n_scored)} scored jobs {pp(c.diff)} "
             f"[{pp(c.diff_lo)}, {pp(c.diff_hi)}], Holm p = {c.diff_p_holm:.2f}, an effect of {pp(c.diff_mde)} "
             f"or more would have been seen with 80% power")
    return shown + f" ({c.verdict})"


def named_comparison(comparisons: pd.DataFrame) -> list[str]:
    """The pre-named comparison of one trace, in words, one item each: the split, each budget's, the
    conclusion."""
    if comparisons is None or comparisons.empty:
        return []
    first = comparisons.iloc[0]
    s = [f"Named before scoring ({first.scheme}): a job is scored once {int(first.warmup)} jobs ended before it "
         f"started, and each candidate is named on those jobs ({int(first.n_choosing_min)} to "
         f"{int(first.n_choosing_max)}) only where its mean cut there exceeds the smallest effect they can tell "
         f"from none (80% power); {int(first.n_scored)} jobs are scored."]
    for c in comparisons.sort_values("budget").itertuples(index=False):
        each = comparison_sentence(c)
        s.append(each[:1].upper() + each[1:] + ".")
    verdicts = comparisons["verdict"].tolist()
    if verdicts and all(v == "learned above" for v in verdicts):
        s.append("The pre-named learned method is above the pre-named free rule at every budget up to 5%.")
    else:
        s.append("The pre-named learned method is not above the pre-named free rule at every budget up to 5%; "
                 "every other method is exploration ({table:matched_budgets}, Holm-adjusted intervals).")
    return s


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
    """Per trace, a list in words: first the pre-named comparison (``named_comparison``), then what
    ``budget`` more machine time buys on the scored jobs (Spark tuned, as Spark runs it, the best
    policy, the headroom), the methods whose flags are flag all's, the cheapest points; every number
    from ``budgets``, ``comparisons`` and ``curves``."""
    out = []
    at_words = f"At {budget * 100:g}% extra machine time, on the scored jobs"
    for trace, b in budgets.groupby("trace", sort=True):
        at = b[b["budget"] == budget]
        if at.empty:
            continue
        comp = None if comparisons is None else comparisons[comparisons["trace"] == trace]
        s = named_comparison(comp)
        spark = _enforced(at)[_enforced(at)["method"] == SPARK]
        if len(spark):
            r = spark.iloc[0]
            s.append(f"{at_words}, Spark's speculation tuned on earlier jobs with the budget enforced "
                     f"({spark_words(r.point_mode)} most often) {jct_sentence(r.jct_reduction)} [{pct(r.jct_lo)}, "
                     f"{pct(r.jct_hi)}] for {pct(r.extra_machine_share, 2)} extra machine time.")
        run = at[at["cap_mode"] == SPARK_AS_RUN] if "cap_mode" in at else at.iloc[0:0]
        if len(run):
            r = run.iloc[0]
            s.append(f"As Spark runs it (no cap: the setting matched within the budget on earlier jobs, changed only "
                     f"where named), it {jct_sentence(r.jct_reduction)} [{pct(r.jct_lo)}, {pct(r.jct_hi)}] for "
                     f"{pct(r.extra_machine_share, 2)} ({int(r.jobs_over_budget)} of {int(r.n_jobs)} jobs above the "
                     f"budget).")
        best = best_policy(at)
        if best is not None:
            s.append(f"The best policy tuned on earlier jobs here, {display_name(best.method)}, "
                     f"{jct_sentence(best.jct_reduction)} [{pct(best.jct_lo)}, {pct(best.jct_hi)}] for "
                     f"{pct(best.extra_machine_share, 2)}.")
        if at["headroom"].notna().any():
            r = at.iloc[0]
            s.append(f"The headroom, per job the best of the oracle and of every point of every policy under the same "
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
        out.append(f"**{trace}** (operator's protocol; every setting tuned on the jobs that ended before each job):\n"
                   + "\n".join(f"- {x}" for x in s if x))
    return "\n\n".join(out)


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


def budget_view(budgets: pd.DataFrame, budget: float | None = HEADLINE_BUDGET) -> pd.DataFrame:
    """The budget table for a reader at ``budget`` (None: every budget): per trace, each method tuned on
    earlier jobs, what it bought and spent, against the free rule named now and the tuned Spark rule
    (Holm); free rules first, each group by its cut in job completion time."""
    rows = []
    shown = budgets if budget is None else budgets[(budgets["budget"] - budget).abs() < 1e-12]
    order = shown.assign(learned=shown["method"].map(is_learned))
    order = order.sort_values(["trace", "budget", "learned", "jct_reduction"], ascending=[True, True, True, False])
    for r in order.itertuples(index=False):
        label = display_name(r.method) + ("" if r.learned else " (free rule)" if r.method in FREE_RULES
                                          else " (reads labels)")
        if getattr(r, "cap_mode", ENFORCED) == SPARK_AS_RUN:
            label += ", as Spark runs it (no cap)"
        rows.append({
            "trace": r.trace, "budget": f"{r.budget * 100:g}%", "method": label,
            "setting (most often chosen)": cut_words(r.method, r.point_mode),
            "jobs' completion time [95% CI of the cut]": f"{jct_words(r.jct_reduction) or 'no change'} "
                                                          f"[{pct(r.jct_lo)}, {pct(r.jct_hi)}]",
            "extra machine time (share of the budget)": f"{pct(r.extra_machine_share, 2)} "
                                                        f"({100 * r.spend_over_budget:.0f}%)",
            "minus the named free rule (Holm 95%)": ("" if pd.isna(r.diff) else
                                                     f"{pp(r.diff)} [{pp(r.diff_lo)}, {pp(r.diff_hi)}]"),
            "minus tuned Spark (Holm 95%)": ("" if pd.isna(r.spark_diff)
                                             else f"{pp(r.spark_diff)} [{pp(r.spark_diff_lo)}, {pp(r.spark_diff_hi)}]"),
            "best setting in hindsight": f"{jct_words(r.in_sample_jct_reduction) or 'no change'}",
            "mean best cut, budgets 0-5%": pct(r.area_to_5pct, 2),
        })
    return pd.DataFrame(rows)


def envelope_view(sweep: pd.DataFrame) -> pd.DataFrame:
    """The sweep for a reader: per trace and method, the settings no other setting of the same method
    beats (as much cut for as little extra machine time), by extra machine time, settings that land on
    the same point said once; settings that copy nothing left out (the full sweep is the CSV file).
    One format per column, every value with its unit."""
    rows = []
    for (trace, method), g in sweep.groupby(["trace", "method"], sort=True):
        g = g[g["extra_machine_share"] > 0]
        ex, jc = g["extra_machine_share"].to_numpy(float), g["jct_reduction"].to_numpy(float)
        keep = [i for i in range(len(g)) if not np.any((ex <= ex[i]) & (jc >= jc[i]) & ((ex < ex[i]) | (jc > jc[i])))]
        kept = g.iloc[keep].assign(_key=g.iloc[keep]["point"].map(natural_key))
        for (extra, cut), same in kept.sort_values(["extra_machine_share", "jct_reduction", "_key"]).groupby(
                ["extra_machine_share", "jct_reduction"], sort=False):
            r = same.iloc[0]
            alike = f" (and {len(same) - 1} other settings alike)" if len(same) > 1 else ""
            rows.append({"trace": trace, "method": display_name(method), "setting": cut_words(method, r.point) + alike,
                         "jobs": int(r.n_jobs), "jobs shortened by (%)": f"{100 * cut:.2f}",
                         "extra machine time (%)": f"{100 * extra:.2f}"})
    out = pd.DataFrame(rows, columns=["trace", "method", "setting", "jobs", "jobs shortened by (%)",
                                      "extra machine time (%)"])
    return out.sort_values(["trace", "method"], kind="mergesort").reset_index(drop=True)
