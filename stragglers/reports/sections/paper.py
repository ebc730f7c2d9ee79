"""The NURD paper's numbers (docs/PAPER_NUMBERS.md) and our Table 3 beside them.

Below the report's other modules: the report (comparison.py) and the terminal summary
(story.py) both compare with the paper.
"""

from __future__ import annotations

import pandas as pd

from stragglers.prediction.replay.metrics import RATES as METRICS
from stragglers.prediction.replay.metrics import sort_by_method as _sort
from stragglers.trace_formats import FORMATS

# Which column of the paper's Table 3 a trace is compared with.
PAPER_TRACE = {name: f.paper_column for name, f in FORMATS.items() if f.paper_column}


#: The paper's Table 3 (means over jobs; docs/PAPER_NUMBERS.md), long form: method, paper_trace
#: ('google' | 'alibaba'), tpr, fpr, fnr, f1; in the comparison's order. The reference rules and
#: the survival family are not in the paper.
PAPER_TABLE3: pd.DataFrame = pd.DataFrame(
    [
        ("abod", "google", 0.95, 0.56, 0.05, 0.29), ("abod", "alibaba", 0.02, 0.01, 0.98, 0.04),
        ("cblof", "google", 0.99, 0.69, 0.01, 0.24), ("cblof", "alibaba", 0.69, 0.50, 0.31, 0.33),
        ("hbos", "google", 0.99, 0.68, 0.01, 0.24), ("hbos", "alibaba", 0.56, 0.39, 0.44, 0.32),
        ("iforest", "google", 0.94, 0.52, 0.06, 0.31), ("iforest", "alibaba", 0.58, 0.45, 0.42, 0.29),
        ("knn", "google", 0.97, 0.49, 0.03, 0.32), ("knn", "alibaba", 0.57, 0.42, 0.43, 0.29),
        ("lof", "google", 0.90, 0.45, 0.10, 0.33), ("lof", "alibaba", 0.39, 0.24, 0.61, 0.25),
        ("mcd", "google", 0.99, 0.52, 0.01, 0.31), ("mcd", "alibaba", 0.75, 0.45, 0.25, 0.42),
        ("ocsvm", "google", 0.91, 0.47, 0.09, 0.32), ("ocsvm", "alibaba", 0.56, 0.41, 0.44, 0.29),
        ("pca", "google", 0.61, 0.27, 0.39, 0.26), ("pca", "alibaba", 0.03, 0.02, 0.97, 0.05),
        ("sos", "google", 0.22, 0.24, 0.78, 0.12), ("sos", "alibaba", 0.08, 0.08, 0.92, 0.11),
        ("lscp", "google", 0.96, 0.51, 0.04, 0.29), ("lscp", "alibaba", 0.65, 0.44, 0.35, 0.35),
        ("cof", "google", 0.27, 0.21, 0.73, 0.14), ("cof", "alibaba", 0.10, 0.07, 0.90, 0.14),
        ("sod", "google", 0.25, 0.08, 0.75, 0.19), ("sod", "alibaba", 0.18, 0.28, 0.82, 0.18),
        ("xgbod", "google", 0.58, 0.18, 0.41, 0.28), ("xgbod", "alibaba", 0.48, 0.14, 0.67, 0.38),
        ("pu_en", "google", 0.99, 0.67, 0.01, 0.27), ("pu_en", "alibaba", 0.72, 0.12, 0.28, 0.54),
        ("pu_bg", "google", 0.99, 0.99, 0.01, 0.16), ("pu_bg", "alibaba", 0.86, 0.16, 0.14, 0.57),
        ("tobit", "google", 0.97, 0.52, 0.03, 0.46), ("tobit", "alibaba", 0.35, 0.02, 0.15, 0.32),
        ("grabit", "google", 0.91, 0.17, 0.04, 0.70), ("grabit", "alibaba", 0.72, 0.19, 0.28, 0.49),
        ("coxph", "google", 0.87, 0.28, 0.11, 0.61), ("coxph", "alibaba", 0.45, 0.10, 0.21, 0.45),
        ("wrangler", "google", 0.95, 0.42, 0.15, 0.46), ("wrangler", "alibaba", 0.83, 0.46, 0.18, 0.38),
        ("gbtr", "google", 0.46, 0.01, 0.54, 0.57), ("gbtr", "alibaba", 0.16, 0.01, 0.48, 0.27),
        ("nurd_nc", "google", 0.96, 0.60, 0.14, 0.42), ("nurd_nc", "alibaba", 0.98, 0.57, 0.12, 0.37),
        ("nurd", "google", 0.95, 0.11, 0.09, 0.81), ("nurd", "alibaba", 0.87, 0.13, 0.17, 0.59),
    ],
    columns=["method", "paper_trace", *METRICS],
)

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
