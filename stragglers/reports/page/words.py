"""Numbers and settings as the report writes them: one format per kind of value, a unit on each.

- ``pct``: a share as a percentage ("1.0%"); ``pp``: a difference of shares in percentage points
  ("+0.20 pp"); ``interval``: "[0.0%, 3.0%]".
- ``cut_words``: a method's sweep point in words with its unit ("copy when P(runs past tau_hat) >
  0.999"; Spark's rule: its three settings), from the grid its method sweeps.
- ``natural_key``: sorts names that hold numbers as numbers ("2" < "12.5" < "100"; "min60" < "min300").
"""

from __future__ import annotations

import re

import pandas as pd

from stragglers.prediction.engine.policies import DEFAULT_POINT
from stragglers.prediction.engine.spark_rule import SpeculationRule
from stragglers.prediction.methods import VARIANTS
from stragglers.prediction.methods.base import CONTAMINATION_GRID, DECISION_GRID, PROBABILITY_GRID, RATIO_GRID
from stragglers.prediction.verdicts.tuning import NO_COPY

SPARK = "spark_speculation"


def pct(v, digits: int = 1) -> str:
    return "-" if v is None or pd.isna(v) else f"{v * 100:.{digits}f}%"


def pp(v, digits: int = 2) -> str:
    return "-" if v is None or pd.isna(v) else f"{v * 100:+.{digits}f} pp"


def interval(lo, hi, digits: int = 1) -> str:
    return "" if lo is None or pd.isna(lo) else f"{pct(lo, digits)} to {pct(hi, digits)}"


def spark_words(point: str) -> str:
    """'quantile 0.75, multiplier 1.5, minTaskRuntime 100ms' of a Spark sweep point ('none': no copy)."""
    if point in (NO_COPY, DEFAULT_POINT, "current"):
        return {NO_COPY: "no speculation", DEFAULT_POINT: "Spark 3's defaults", "current": "the setting it ran with"}[point]
    return SpeculationRule.from_point(point).words()


#: what a method's score is, by the grid it sweeps: the cut's unit
_SCORE_WORDS = (
    (RATIO_GRID, "copy when its predicted latency reaches {v} x tau_hat"),
    (PROBABILITY_GRID, "copy when its probability of straggling passes {v}"),
    (CONTAMINATION_GRID, "copy the top {share} of its outlier scores"),
    (DECISION_GRID, "copy when its SVM score passes {v}"),
)
_OWN = {"flag_all": "every running task at t1", "oracle": "every true straggler at the first decision",
        "wait_for_tau": "every task still running just before tau_hat",
        "km_survival": "copy when more likely than not to run past tau_hat"}


def cut_words(method: str, point) -> str:
    """A method's sweep point in words, with its unit."""
    point = str(point)
    if point == NO_COPY:
        return "no copy"
    if method == SPARK or point.startswith("q"):
        return spark_words(point)
    if point == DEFAULT_POINT:
        return _OWN.get(method, "its own rule")
    try:
        v = float(point)
    except ValueError:
        return point
    if method == "km_survival":
        return f"copy when P(runs past tau_hat) passes {v:g}"
    if method == "wait_for_tau":
        return f"copy once the task will have run {v:g} x tau_hat by the next decision"
    grid = getattr(VARIANTS.get(method), "sweep_grid", None)
    for g, words in _SCORE_WORDS:
        if grid is g:
            return words.format(v=f"{v:g}", share=f"{v * 100:g}%")
    return f"cut {v:g} (its score)"


def natural_key(text) -> tuple:
    """A sort key reading the numbers inside ``text`` as numbers."""
    parts = re.split(r"(-?\d+(?:\.\d+)?)", str(text))
    return tuple((0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts) if p)
