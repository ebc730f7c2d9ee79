"""The completion-time simulations the report reads: what relaunching (the paper's Algorithms 2-3) and
speculative copies (the operator's protocol) of every evaluated method's flags do to the jobs
(stragglers/reports/compute/simulations.py computes them)."""

from stragglers.prediction.copies.completion import RELAUNCH_SEEDS
from stragglers.reports.compute.simulations import COMPLETION_TIMES
from stragglers.reports.compute.simulations import simulations
from stragglers.warehouse.freshness import Kept

from .common import evaluation_tables_asset, md_table


def _metadata(kept: Kept) -> dict:
    if not kept.rebuilt:
        return {"rebuilt": False}
    completion, speculation, _per_job = kept.computed
    meta = {"rebuilt": True, "completion_times": md_table(completion, max_rows=200)}
    if speculation is not None:
        meta["speculation_times"] = md_table(speculation, max_rows=200)
    return meta


completion_times = evaluation_tables_asset(
    "completion_times", COMPLETION_TIMES, simulations, _metadata,
    "What relaunching every evaluated method's flagged tasks does to the jobs' "
    "completion time (the paper's Algorithms 2-3, Figures 4-9: table `completion_times`), "
    "and, under the operator's protocol, what speculative copies do (table "
    "`speculation_times`; per job for the survival family and the free rules: "
    f"`speculation_job_times`), mean over {len(RELAUNCH_SEEDS)} simulation seeds, for "
    "every trace in the warehouse. comparison_tables reads them.")
