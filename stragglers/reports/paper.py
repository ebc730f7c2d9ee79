"""The NURD paper's numbers (docs/PAPER_NUMBERS.md) and our Table 3 beside them.

Below the report's other modules: the report (comparison.py) and the terminal summary
(story.py) both compare with the paper.
"""

from __future__ import annotations

import pandas as pd

from stragglers.prediction.methods import VARIANTS
from stragglers.prediction.metrics import RATES as METRICS
from stragglers.prediction.metrics import sort_by_method as _sort
from stragglers.trace_formats import FORMATS

# Which column of the paper's Table 3 a trace is compared with.
PAPER_TRACE = {name: f.paper_column for name, f in FORMATS.items() if f.paper_column}


def _paper_table3() -> pd.DataFrame:
    """The paper's Table 3 (docs/PAPER_NUMBERS.md: "TPR/FPR/FNR/F1"), from each method class."""
    rows = [(v.name, paper_trace, *(float(x) for x in cell.split("/")))
            for v in VARIANTS.values() for paper_trace, cell in v.paper_table3.items()]
    return pd.DataFrame(rows, columns=["method", "paper_trace", *METRICS])


#: The paper's Table 3 (means over jobs), long form: method, paper_trace
#: ('google' | 'alibaba'), tpr, fpr, fnr, f1.
PAPER_TABLE3: pd.DataFrame = _paper_table3()

#: The paper's completion-time headline figures (Section 7.3), fractions.
PAPER_COMPLETION = pd.DataFrame(
    [
        ("google", "unlimited", 0.258, 0.038),
        ("alibaba", "unlimited", 0.186, 0.035),
        ("google", "limited_avg", 0.531, 0.047),
        ("alibaba", "limited_avg", 0.466, 0.088),
    ],
    columns=["paper_trace", "algorithm", "nurd_reduction", "nurd_margin_over_best_baseline"],
)


def compare_with_paper(t3: pd.DataFrame) -> pd.DataFrame:
    """Our Table 3 with the paper's numbers beside it.

    Adds ``paper_trace`` ('google' for google_2011, 'alibaba' for the Alibaba
    traces, NaN otherwise), ``paper_<m>`` and ``<m>_diff`` (ours - paper) for
    m in tpr, fpr, fnr, f1. Rows of other traces keep NaN there.
    """
    out = t3.copy()
    out["paper_trace"] = out["trace"].map(PAPER_TRACE)
    paper = PAPER_TABLE3.rename(columns={m: f"paper_{m}" for m in METRICS})
    out = out.merge(paper, on=["method", "paper_trace"], how="left")
    for m in METRICS:
        out[f"{m}_diff"] = out[m] - out[f"paper_{m}"]
    return _sort(out, ["trace", "method"])
