"""Settings of the node ranking (defaults written once here; docs/NODES.md explains them)."""

from __future__ import annotations

from typing import Literal

from stragglers.settings.prediction import PredictionSettings
from stragglers.settings.stage import SettingsView, StageSettings, constant, linked, setting

INTERVALS = ("mean", "fitted")


class NodeRankingSettings(StageSettings):
    # node ranking, Ouyang et al. (stragglers/nodes, docs/NODES.md)
    node_min_tasks: int = setting(10, env="NURD_NODE_MIN_TASKS", ge=3)
    """node ranking: machines with fewer finished tasks are not ranked (counted); Hound's hound_with_nodes: machines
    with fewer tasks of other jobs are not judged"""
    node_fit_sample: int = setting(132, ge=0)
    """node ranking: nodes whose 9 distributions are fitted, stratified by server type (the paper's sample of 132);
    0 = every ranked node"""
    node_interval: Literal[INTERVALS] = setting("mean")
    """node ranking: P-cores interval, 'mean' = 95% CI of the node's mean z, 'fitted' = central 95% of its fitted
    3-parameter log-logistic"""


class NodeSettings(SettingsView):
    # machines with fewer finished tasks are not ranked
    min_tasks_per_node = linked(NodeRankingSettings, "node_min_tasks")
    # nodes whose 9 distributions are fitted (Section IV-B)
    fit_sample_nodes = linked(NodeRankingSettings, "node_fit_sample")
    confidence: float = constant(0.95, setting="node_confidence", ge=0.5, lt=1)   # confidence of the interval indicator (Table 1)
    # "mean": CI of the mean z; "fitted": central interval of the fit
    interval = linked(NodeRankingSettings, "node_interval")
    quantile: float = constant(0.9, setting="node_quantile", gt=0, lt=1)   # quantile indicator (Table 1), of the fitted 3p log-logistic
    extreme_z: float = 1.0           # extreme-value possibility P(z > extreme_z), of the fitted 3p log-logistic
    seed = linked(PredictionSettings, "seed")     # sampling of the fitted nodes
