"""Hound's settings: every default written once (the ``nurd`` resource exposes them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from stragglers.settings import default, require



PROFILE_WEIGHTS = ("strength", "share")


@dataclass(frozen=True)
class HoundSettings:
    min_tasks: int = default("hound_min_tasks")      # Section 4.1: jobs with fewer finished tasks are left out
    seed: int = default("seed")
    replicas: int = default("hound_replicas")        # Algorithm 1: bootstrap replicas I of BAE
    l1_ratio: float = 0.5              # ElasticNet mix of L1 and L2 (paper: not given)
    ssw_min_grid: int = 50             # SSW: grid of max(this, sqrt(M)) sampled tasks (Section 3.1, App. G)
    ssw_sign_tol: float | None = None  # SSW sign tolerance epsilon; None = one s.e. of rho_S / 6
    adaboost_rounds: int = default("hound_adaboost_rounds")   # Algorithm 2: iterations I
    propensity_clip: float = 0.02      # propensities clipped to [c, 1 - c] before IPW
    words: int = default("hound_words")              # Algorithm 3: W words per document
    k_min: int = 5                     # Algorithm 3: first number of topics
    coverage_stop: float = 0.05        # Algorithm 3: epsilon, minimum document coverage of a topic
    trim: float = 0.1                  # Algorithms 3 and 4: eta
    ensemble_lambda: float = 2 / 3     # Algorithm 4: SCORE = lambda H1 + (1 - lambda)(1 - H2)
    # a profile's weights: "strength", each learner's own magnitudes (Section 3.1, as published), or
    # "share", each learner's words weighted by the share of the job's stragglers that show them
    # (Section 5.1; learners.share_weighted). Issue 28: measured, not adopted (docs/HOUND.md).
    profile_weights: str = "strength"
    straggler_quantile: float = default("quantile")   # "share": a straggler's latency is above this quantile
    # hound_with_nodes (machine_evidence): a machine is judged from at least this many tasks of other
    # jobs, the node ranking's minimum (Ouyang et al.; root setting node_min_tasks, written once there)
    node_min_tasks: int = default("node_min_tasks")
    workers: int = 1                   # processes over jobs

    def __post_init__(self) -> None:
        require(isinstance(self.min_tasks, int) and self.min_tasks >= 5, "hound_min_tasks", self.min_tasks,
               "an integer >= 5")
        require(isinstance(self.replicas, int) and self.replicas >= 1, "hound_replicas", self.replicas,
               "an integer >= 1")
        require(0 < self.l1_ratio <= 1, "hound_l1_ratio", self.l1_ratio, "a number in (0, 1]")
        require(isinstance(self.ssw_min_grid, int) and self.ssw_min_grid >= 2, "hound_ssw_min_grid",
               self.ssw_min_grid, "an integer >= 2")
        require(self.ssw_sign_tol is None or self.ssw_sign_tol >= 0, "hound_ssw_sign_tol", self.ssw_sign_tol,
               "None or a number >= 0")
        require(isinstance(self.adaboost_rounds, int) and self.adaboost_rounds >= 1, "hound_adaboost_rounds",
               self.adaboost_rounds, "an integer >= 1")
        require(0 <= self.propensity_clip < 0.5, "hound_propensity_clip", self.propensity_clip, "a number in [0, 0.5)")
        require(isinstance(self.words, int) and self.words >= 10, "hound_words", self.words, "an integer >= 10")
        require(isinstance(self.k_min, int) and self.k_min >= 2, "hound_k_min", self.k_min, "an integer >= 2")
        require(0 <= self.coverage_stop < 1, "hound_coverage_stop", self.coverage_stop, "a number in [0, 1)")
        require(0 <= self.trim < 0.5, "hound_trim", self.trim, "a number in [0, 0.5)")
        require(0 <= self.ensemble_lambda <= 1, "hound_ensemble_lambda", self.ensemble_lambda, "a number in [0, 1]")
        require(self.profile_weights in PROFILE_WEIGHTS, "hound_profile_weights", self.profile_weights,
               f"one of {', '.join(PROFILE_WEIGHTS)}")
        require(0.5 <= self.straggler_quantile < 1, "hound_straggler_quantile", self.straggler_quantile,
               "a number in [0.5, 1)")
        require(isinstance(self.node_min_tasks, int) and self.node_min_tasks >= 3, "node_min_tasks",
               self.node_min_tasks, "an integer >= 3")
        require(isinstance(self.workers, int) and self.workers >= 1, "hound_workers", self.workers, "an integer >= 1")

    def as_dict(self) -> dict:
        return asdict(self)
