"""Registry of every method: one line per method.

``NURD_FAMILY`` is evaluated by asset ``nurd_eval`` (one shared fit per
checkpoint); ``BASELINES`` are the partitions of asset ``baseline_eval``.
"""

from __future__ import annotations

from stragglers.prediction.methods.base import CannotFit, JobContext, Method, TaskSet
from stragglers.prediction.methods.outliers import (
    ABODMethod, CBLOFMethod, COFMethod, HBOSMethod, IForestMethod, KNNMethod, LOFMethod,
    LSCPMethod, MCDMethod, OCSVMMethod, PCAMethod, SODMethod, SOSMethod, XGBODMethod,
)
from stragglers.prediction.methods.pu import PUBagging, PUElkanNoto
from stragglers.prediction.methods.survival import CoxPH, Grabit, Tobit
from stragglers.prediction.methods.rules import FlagAll, SparkSpeculation, WaitForTau
from stragglers.prediction.methods.wrangler import Wrangler

NURD_FAMILY = ("nurd", "nurd_nc", "gbtr")

# name -> Method subclass; filled by the modules below (one line each).
BASELINES: dict[str, type[Method]] = {}
BASELINES["abod"] = ABODMethod
BASELINES["cblof"] = CBLOFMethod
BASELINES["hbos"] = HBOSMethod
BASELINES["iforest"] = IForestMethod
BASELINES["knn"] = KNNMethod
BASELINES["lof"] = LOFMethod
BASELINES["mcd"] = MCDMethod
BASELINES["ocsvm"] = OCSVMMethod
BASELINES["pca"] = PCAMethod
BASELINES["sos"] = SOSMethod
BASELINES["lscp"] = LSCPMethod
BASELINES["cof"] = COFMethod
BASELINES["sod"] = SODMethod
BASELINES["xgbod"] = XGBODMethod
BASELINES["pu_en"] = PUElkanNoto
BASELINES["pu_bg"] = PUBagging
BASELINES["tobit"] = Tobit
BASELINES["grabit"] = Grabit
BASELINES["coxph"] = CoxPH
BASELINES["wrangler"] = Wrangler
BASELINES["flag_all"] = FlagAll
BASELINES["wait_for_tau"] = WaitForTau
BASELINES["spark_speculation"] = SparkSpeculation

__all__ = ["BASELINES", "NURD_FAMILY", "CannotFit", "JobContext", "Method", "TaskSet"]
