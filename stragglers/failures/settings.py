"""Settings of failure prediction and proactive cloning (defaults written once here)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from stragglers.settings import default, require



@dataclass(frozen=True)
class FailureSettings:
    trees: int = default("failure_trees")                # random-forest trees (Section V-A)
    train_fraction: float = 0.7           # share of jobs in the training set (split by job)
    seed: int = default("seed")                          # split, forest and sampling seed
    thresholds: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)   # Figs. 7, 8, 10 (left)
    sampling_ratios: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0)   # positives per negative in training (0 = as is)
    max_train_rows: int = default("failure_max_train_rows")   # training rows per forest (seeded sample beyond)
    usage_window_s: int = 300             # "first 5 minutes" of usage (Table IV)
    clone_retries: int = default("clone_retries")        # R of Algorithm 1
    clones: int = default("clones")                      # C of Algorithm 1
    clone_tasks: int = default("clone_tasks")            # tasks in each cloning train / evaluation set (VI-B)
    clone_thresholds: tuple[float, ...] = (0.1, 0.5, 0.9, 0.95, 0.99)  # Table V rows
    clone_counts: tuple[int, ...] = (1, 2, 3)                          # Table V columns

    def __post_init__(self) -> None:
        require(isinstance(self.trees, int) and self.trees >= 1, "failure_trees", self.trees, "an integer >= 1")
        require(0 < self.train_fraction < 1, "failure_train_fraction", self.train_fraction, "a number in (0, 1)")
        require(all(0 < t < 1 for t in self.thresholds), "thresholds", self.thresholds, "numbers in (0, 1)")
        require(all(r >= 0 for r in self.sampling_ratios), "sampling_ratios", self.sampling_ratios, "numbers >= 0")
        require(isinstance(self.max_train_rows, int) and self.max_train_rows >= 100, "failure_max_train_rows",
               self.max_train_rows, "an integer >= 100")
        require(isinstance(self.clone_retries, int) and self.clone_retries >= 0, "clone_retries",
               self.clone_retries, "an integer >= 0")
        require(isinstance(self.clones, int) and self.clones >= 1, "clones", self.clones, "an integer >= 1")
        require(isinstance(self.clone_tasks, int) and self.clone_tasks >= 10, "clone_tasks", self.clone_tasks,
               "an integer >= 10")

    def as_dict(self) -> dict:
        return asdict(self)
