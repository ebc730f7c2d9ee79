"""Settings of the node ranking (defaults written once here; docs/NODES.md explains them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from stragglers.prediction.settings import PredictionSettings
from stragglers.stage_settings import StageSettings, check_linked, linked, require, setting

INTERVALS = ("mean", "fitted")


class NodeRankingSettings(StageSettings):
    # node ranking, Ouyang et al. (stragglers/nodes, docs/NODES.md)
    node_min_tasks: int = setting(10, env="NURD_NODE_MIN_TASKS", ge=3,
                                  doc="node ranking: machines with fewer finished tasks are not ranked (counted); "
                                      "Hound's hound_with_nodes: machines with fewer tasks of other jobs are "
                                      "not judged")
    node_fit_sample: int = setting(132, ge=0,
                                   doc="node ranking: nodes whose 9 distributions are fitted, stratified by server "
                                       "type (the paper's sample of 132); 0 = every ranked node")
    node_interval: Literal[INTERVALS] = setting(
        "mean", doc="node ranking: P-cores interval, 'mean' = 95% CI of the node's mean z, "
                    "'fitted' = central 95% of its fitted 3-parameter log-logistic")



@dataclass(frozen=True)
class NodeSettings:
    # machines with fewer finished tasks are not ranked
    min_tasks_per_node: int = linked(NodeRankingSettings, "node_min_tasks")
    # nodes whose 9 distributions are fitted (Section IV-B)
    fit_sample_nodes: int = linked(NodeRankingSettings, "node_fit_sample")
    confidence: float = 0.95         # confidence of the interval indicator (Table 1)
    # "mean": CI of the mean z; "fitted": central interval of the fit
    interval: str = linked(NodeRankingSettings, "node_interval")
    quantile: float = 0.9            # quantile indicator (Table 1), of the fitted 3p log-logistic
    extreme_z: float = 1.0           # extreme-value possibility P(z > extreme_z), of the fitted 3p log-logistic
    seed: int = linked(PredictionSettings, "seed")     # sampling of the fitted nodes

    def __post_init__(self) -> None:
        check_linked(self)   # the run's settings, by their declarations
        require(0.5 <= self.confidence < 1, "node_confidence", self.confidence, "a number in [0.5, 1)")
        require(0 < self.quantile < 1, "node_quantile", self.quantile, "a number in (0, 1)")

    def as_dict(self) -> dict:
        return asdict(self)
