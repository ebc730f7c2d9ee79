"""Registry of every method: one entry per class, keyed by the class's own ``name``.

``NurdFamily`` is evaluated by asset ``nurd_eval`` (one shared fit per
checkpoint for NURD, NURD-NC and GBTR); every other method is a partition of
asset ``baseline_eval``. Adding a method is one class (with ``name``,
``display_name``, ``band``, ``paper_table3`` and explicit hyperparameters in
``__init__``) and one entry in ``METHOD_CLASSES``. The order of
``METHOD_CLASSES`` is the order of the comparison tables within each band.
"""

from __future__ import annotations

from stragglers.prediction.methods.base import BANDS, CannotFit, JobContext, Method, TaskSet, Variant
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

#: Every row of the comparison (variants of families expanded), by name, in table order.
VARIANTS: dict[str, Variant] = {
    v.name: v for band in BANDS for cls in METHOD_CLASSES for v in cls.catalog() if v.band == band}

#: The reference rules (band "reference"): the free rules and the oracle.
REFERENCE_RULES = tuple(n for n, v in VARIANTS.items() if v.band == "reference")
#: The free rules: what a scheduler gets without a model (the oracle reads the true labels).
FREE_RULES = tuple(n for n in REFERENCE_RULES if not METHODS[n].oracle)

#: The survival family (issue 27): the methods that learn from earlier jobs.
SURVIVAL_FAMILY = tuple(n for n, cls in METHODS.items() if cls.learns_from_earlier_jobs)

__all__ = ["SURVIVAL_FAMILY", "BASELINES", "BANDS", "METHODS", "METHOD_CLASSES", "NURD_FAMILY", "FREE_RULES", "REFERENCE_RULES", "VARIANTS",
           "CannotFit", "JobContext", "Method", "TaskSet", "Variant"]
