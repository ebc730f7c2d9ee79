"""What the report opens with on Spark event logs: the settings to set (table ``spark_answer``, written
by stragglers.prediction.spark_speculation), the spark-defaults.conf block to copy, and the best
learned method beside it at the same budget (from ``matched_budgets``: every method and rule of the
learned chain, tuned on the stages that ended before each stage). Plain pandas in, Markdown out."""

from __future__ import annotations

import pandas as pd

from stragglers.prediction.methods import is_learned
from stragglers.reports.budgets import pct
from stragglers.reports.style import display_name
from stragglers.reports.views import jct_sentence
from stragglers.trace_formats import FORMATS


def best_learned(budgets: pd.DataFrame | None, trace: str, budget_pct: float) -> pd.Series | None:
    """The learned method with the largest stage-time cut on ``trace`` at the budget of ``matched_budgets``
    nearest ``budget_pct`` (percent), or None without the budgets."""
    if budgets is None or not len(budgets):
        return None
    b = budgets[(budgets["trace"] == trace) & budgets["method"].map(is_learned)]
    if b.empty:
        return None
    nearest = b["budget"].iloc[(b["budget"] - budget_pct / 100).abs().argsort().iloc[0]]
    at = b[b["budget"] == nearest]
    return at.loc[at["jct_reduction"].idxmax()]


def learned_sentence(best: pd.Series | None) -> str:
    if best is None:
        return "No learned method was scored at the budgets (materialize nurd_eval and baseline_eval)."
    effect = jct_sentence(best.jct_reduction).replace("job completion time", "stage time").replace("jobs", "stages")
    return (f"The best learned method at {best.budget * 100:g}% extra machine time, {display_name(best.method)}, "
            f"{effect} [{pct(best.jct_lo)}, "
            f"{pct(best.jct_hi)}] for {pct(best.extra_machine_share, 2)} (the learned chain's replay, each setting "
            f"tuned on the stages that ended before; every method and rule at every budget in the tables below).")


def opening(answers: pd.DataFrame, budgets: pd.DataFrame | None) -> str:
    """Per trace: the answer's sentence, the block to copy, the best learned method beside it."""
    out = []
    for r in answers.itertuples(index=False):
        out.append(f"**{r.trace}**: {r.answer}\n\n```\n{r.conf.rstrip()}\n```\n\n"
                   + learned_sentence(best_learned(budgets, r.trace, r.budget_pct)))
    return "\n\n".join(out)


def answer_view(answers: pd.DataFrame) -> pd.DataFrame:
    """The answer's numbers: the chosen setting and Spark 4.0's defaults on the later stages."""
    def cut(v, lo=None, hi=None) -> str:
        if v is None or pd.isna(v):
            return "-"
        return f"{v:.2f}%" + ("" if lo is None or pd.isna(lo) else f" [{lo:.2f}, {hi:.2f}]")

    rows = []
    for r in answers.itertuples(index=False):
        base = {"trace": r.trace, "stages scored (earlier / later)": f"{r.earlier} / {r.later}",
                "set aside (short / one host)": f"{r.set_aside_short} / {r.set_aside_one_host}"}
        rows.append(base | {"setting": r.chosen or "none chosen",
                            "stage time cut % [95% CI]": cut(r.chosen_cut_pct, r.chosen_cut_lo, r.chosen_cut_hi),
                            "extra executor time %": cut(r.chosen_extra_pct)})
        rows.append(base | {"setting": r.defaults_rule, "stage time cut % [95% CI]": cut(r.defaults_cut_pct),
                            "extra executor time %": cut(r.defaults_extra_pct)})
    return pd.DataFrame(rows)


def paper_not_applicable(traces) -> list[str]:
    """One line per trace whose format has no paper's protocol (why, from its TraceFormat)."""
    return [f"The paper's protocol does not apply to trace {t}: {FORMATS[t].paper_protocol_not_applicable}."
            for t in sorted(traces) if t in FORMATS and FORMATS[t].paper_protocol_not_applicable]
