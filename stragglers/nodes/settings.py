"""Settings of the node ranking (defaults written once here; docs/NODES.md explains them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from stragglers.settings import default, require


INTERVALS = ("mean", "fitted")


@dataclass(frozen=True)
class NodeSettings:
    min_tasks_per_node: int = default("node_min_tasks")   # machines with fewer finished tasks are not ranked
    fit_sample_nodes: int = default("node_fit_sample")    # nodes whose 9 distributions are fitted (Section IV-B)
    confidence: float = 0.95         # confidence of the interval indicator (Table 1)
    interval: str = default("node_interval")    # "mean": CI of the mean z; "fitted": central interval of the fit
    quantile: float = 0.9            # quantile indicator (Table 1), of the fitted 3p log-logistic
    extreme_z: float = 1.0           # extreme-value possibility P(z > extreme_z), of the fitted 3p log-logistic
    seed: int = default("seed")     # sampling of the fitted nodes

    def __post_init__(self) -> None:
        require(isinstance(self.min_tasks_per_node, int) and self.min_tasks_per_node >= 3, "node_min_tasks",
               self.min_tasks_per_node, "an integer >= 3")
        require(isinstance(self.fit_sample_nodes, int) and self.fit_sample_nodes >= 0, "node_fit_sample",
               self.fit_sample_nodes, "an integer >= 0 (0 = every ranked node)")
        require(0.5 <= self.confidence < 1, "node_confidence", self.confidence, "a number in [0.5, 1)")
        require(self.interval in INTERVALS, "node_interval", self.interval, f"one of {INTERVALS}")
        require(0 < self.quantile < 1, "node_quantile", self.quantile, "a number in (0, 1)")
        require(self.seed >= 0, "seed", self.seed, "an integer >= 0")

    def as_dict(self) -> dict:
        return asdict(self)
