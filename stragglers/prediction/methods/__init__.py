"""Registry of every method: one entry per class, keyed by the class's own ``name``.

``NurdFamily`` is evaluated by asset ``nurd_eval`` (one shared fit per
checkpoint for NURD, NURD-NC and GBTR); every other method is a partition of
asset ``baseline_eval``. Adding a method is one class (with ``name``, ``family``,
its ``tags`` where a default does not hold, and explicit hyperparameters in
``__init__``) and one entry in ``METHOD_CLASSES``. The order of
``METHOD_CLASSES`` is the order of the comparison tables: the reference rules,
the baselines, the NURD family. How a method is shown (display name, band, the
paper's numbers) is the reports stage's (stragglers/reports/page/style.py, paper.py).
"""

from __future__ import annotations

from stragglers.prediction.methods.base import CannotFit, JobContext, Method, MethodTags, TaskSet, variant_names
from stragglers.prediction.methods.nurd import NurdFamily
from stragglers.prediction.methods.outliers import (
    ABODMethod, CBLOFMethod, COFMethod, HBOSMethod, IForestMethod, KNNMethod, LOFMethod,
    LSCPMethod, MCDMethod, OCSVMMethod, PCAMethod, SODMethod, SOSMethod, XGBODMethod,
)
from stragglers.prediction.methods.pu import PUBagging, PUElkanNoto
from stragglers.prediction.methods.rules import FlagAll, KMSurvival, Oracle, Spark4Speculation, SparkSpeculation, WaitForTau
from stragglers.prediction.methods.survival import CoxPH, Grabit, SurvivalHistory, SurvivalJob, Tobit
from stragglers.prediction.methods.wrangler import Wrangler

METHOD_CLASSES: tuple[type[Method], ...] = (
    FlagAll, WaitForTau, SparkSpeculation, Spark4Speculation, KMSurvival, Oracle,
    ABODMethod, CBLOFMethod, HBOSMethod, IForestMethod, KNNMethod, LOFMethod, MCDMethod, OCSVMMethod,
    PCAMethod, SOSMethod, LSCPMethod, COFMethod, SODMethod, XGBODMethod, PUElkanNoto, PUBagging,
    Tobit, Grabit, CoxPH, SurvivalJob, SurvivalHistory, Wrangler,
    NurdFamily,
)

METHODS: dict[str, type[Method]] = {cls.name: cls for cls in METHOD_CLASSES}
assert len(METHODS) == len(METHOD_CLASSES), "two method classes share a name"

NURD_FAMILY = NurdFamily.variants
# the partitions of baseline_eval: every method but the NURD family
BASELINES: dict[str, type[Method]] = {n: cls for n, cls in METHODS.items() if cls is not NurdFamily}

# The NURD family's rows end with NURD, as in the paper's Table 3 (one fit computes them, NURD first).
_NURD_ROWS = ("gbtr", "nurd_nc", "nurd")
assert sorted(_NURD_ROWS) == sorted(NURD_FAMILY)

#: Every variant a replay reports (families expanded) -> the class that computes it, in table order.
VARIANTS: dict[str, type[Method]] = {
    v: cls for cls in METHOD_CLASSES for v in (_NURD_ROWS if cls is NurdFamily else variant_names(cls))}

#: The reference rules: the free rules and the oracle (no model of the features).
REFERENCE_RULES = tuple(n for n, cls in VARIANTS.items() if cls.tags.reference_rule)
#: The free rules: what a scheduler gets without a model (the oracle reads the true labels).
FREE_RULES = tuple(n for n in REFERENCE_RULES if not METHODS[n].tags.reads_labels)



def is_learned(method: str) -> bool:
    """A learned method: not a reference rule, not a reader of true labels (the oracle, Wrangler)."""
    if method in REFERENCE_RULES:
        return False
    owner = VARIANTS.get(method)
    return owner is not None and not owner.tags.reads_labels


#: The survival family: the methods that learn from earlier jobs.
SURVIVAL_FAMILY = tuple(n for n, cls in METHODS.items() if cls.tags.learns_from_earlier_jobs)

__all__ = ["SURVIVAL_FAMILY", "BASELINES", "METHODS", "METHOD_CLASSES", "NURD_FAMILY", "FREE_RULES", "REFERENCE_RULES",
           "VARIANTS", "is_learned", "CannotFit", "JobContext", "Method", "MethodTags", "TaskSet"]
