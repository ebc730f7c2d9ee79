"""Spark's answer on its event logs as the report's table shows it (``spark_answer_rows``, made by
stragglers/prediction/verdicts/spark_answer.py, the same function as ``nurd-spark advise``): the setting the
applications run, Spark 4.0's defaults and the answer side by side on the scored stages (the verdict
and the spark-defaults.conf block are the answer box's: stragglers.reports.sections.answer_box). Plain pandas
in, a frame out."""

from __future__ import annotations

import pandas as pd

from stragglers.prediction.verdicts.spark_answer import change
from stragglers.prediction.verdicts.tuning import HEADLINE_BUDGET
from stragglers.trace_formats import FORMATS


def _at(df: pd.DataFrame, budget: float) -> pd.DataFrame:
    return df[(df["budget"] - budget).abs() < 1e-12]


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
