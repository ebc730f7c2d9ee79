"""The completion-time simulations the report reads: what relaunching (the paper's Algorithms 2-3) and
speculative copies (the operator's protocol) of every evaluated method's flags do to the jobs
(stragglers/reports/compute/simulations.py computes them)."""

from stragglers.prediction.engine.draws import RELAUNCH_SEEDS
from stragglers.reports.compute.simulations import COMPLETION_TIMES, SIMULATION_TABLES, simulations

from .common import evaluation_tables_asset

completion_times = evaluation_tables_asset(
    "completion_times", COMPLETION_TIMES, simulations, SIMULATION_TABLES, ("completion_times", "speculation_times"),
    "What relaunching every evaluated method's flagged tasks does to the jobs' "
    "completion time (the paper's Algorithms 2-3, Figures 4-9: table `completion_times`), "
    "and, under the operator's protocol, what speculative copies do (table "
    "`speculation_times`; per job for the survival family and the free rules: "
    f"`speculation_job_times`), mean over {len(RELAUNCH_SEEDS)} simulation seeds, for "
    "every trace in the warehouse. comparison_tables reads them.")
