"""What the report opens with on Spark event logs: the operator's answer (tables ``spark_answer`` and
``spark_answer_rows``, made by stragglers/prediction/spark_answer.py, the same function as
``nurd-spark advise``): the verdict, the spark-defaults.conf block to copy, and the setting the
applications run, Spark 4.0's defaults and the answer side by side on the scored stages. Plain pandas
in, Markdown out."""

from __future__ import annotations

import pandas as pd

from stragglers.prediction.spark_answer import change
from stragglers.prediction.tuning import HEADLINE_BUDGET
from stragglers.trace_formats import FORMATS


def _at(df: pd.DataFrame, budget: float) -> pd.DataFrame:
    return df[(df["budget"] - budget).abs() < 1e-12]


def opening(answers: pd.DataFrame, budget: float = HEADLINE_BUDGET) -> str:
    """Per trace: the verdict, the block to copy, what it rests on."""
    out = []
    for r in _at(answers, budget).itertuples(index=False):
        out.append(f"**{r.trace}**: {r.verdict} You run: {r.current}. It rests on {int(r.stages)} stages of "
                   f"{int(r.applications)} applications; {int(r.scored)} later stages score it, each with the "
                   f"setting chosen on the stages that ended before it started.\n\n```\n{r.conf.rstrip()}\n```")
    return "\n\n".join(out)


def answer_view(rows: pd.DataFrame, budget: float = HEADLINE_BUDGET) -> pd.DataFrame:
    """The answer's numbers on the scored stages: what runs, Spark 4.0's defaults, the answer."""
    out = []
    for r in _at(rows, budget).itertuples(index=False):
        out.append({"trace": r.trace, "who": r.who, "setting": r.setting,
                    "stage time change [95% CI]": f"{change(r.cut)} [{change(r.cut_hi)}, {change(r.cut_lo)}]",
                    "extra executor time": f"+{100 * r.extra:.2f}%", "copies per stage": f"{r.copies:.1f}",
                    "stages": int(r.stages)})
    return pd.DataFrame(out)


def paper_not_applicable(traces) -> list[str]:
    """One line per trace whose format has no paper's protocol (why, from its TraceFormat)."""
    return [f"The paper's protocol does not apply to trace {t}: {FORMATS[t].paper_protocol_not_applicable}."
            for t in sorted(traces) if t in FORMATS and FORMATS[t].paper_protocol_not_applicable]
