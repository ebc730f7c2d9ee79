"""Hound's settings: ``DiagnosisSettings``, those a run sets (bounds and defaults declared once, on
the fields), and ``HoundSettings``, all Hound takes (the others are Hound's constants)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from stragglers.nodes.settings import NodeRankingSettings
from stragglers.prediction.settings import PredictionSettings
from stragglers.stage_settings import StageSettings, check_linked, linked, require, setting
from stragglers.warehouse.settings import WarehouseSettings


class DiagnosisSettings(StageSettings):
    # Hound cause diagnosis (stragglers/diagnosis, docs/HOUND.md)
    hound_min_tasks: int = setting(20, env="NURD_HOUND_MIN_TASKS", ge=5,
                                   doc="Hound: jobs with fewer finished tasks are not diagnosed (Hound Section 4.1)")
    hound_replicas: int = setting(20, ge=1,
                                  doc="Hound PR: bootstrap replicas of Bagging Augmented ElasticNet (Algorithm 1)")
    hound_adaboost_rounds: int = setting(25, ge=1,
                                         doc="Hound CA: AdaBoost iterations of the propensity score (Algorithm 2)")
    hound_words: int = setting(500, ge=10,
                               doc="Hound meta learning: words drawn per job (Algorithm 3)")


PROFILE_WEIGHTS = ("strength", "share")


@dataclass(frozen=True)
class HoundSettings:
    # Section 4.1: jobs with fewer finished tasks are left out
    min_tasks: int = linked(DiagnosisSettings, "hound_min_tasks")
    seed: int = linked(PredictionSettings, "seed")
    replicas: int = linked(DiagnosisSettings, "hound_replicas")        # Algorithm 1: bootstrap replicas I of BAE
    l1_ratio: float = 0.5              # ElasticNet mix of L1 and L2 (paper: not given)
    ssw_min_grid: int = 50             # SSW: grid of max(this, sqrt(M)) sampled tasks (Section 3.1, App. G)
    ssw_sign_tol: float | None = None  # SSW sign tolerance epsilon; None = one s.e. of rho_S / 6
    adaboost_rounds: int = linked(DiagnosisSettings, "hound_adaboost_rounds")   # Algorithm 2: iterations I
    propensity_clip: float = 0.02      # propensities clipped to [c, 1 - c] before IPW
    words: int = linked(DiagnosisSettings, "hound_words")              # Algorithm 3: W words per document
    k_min: int = 5                     # Algorithm 3: first number of topics
    coverage_stop: float = 0.05        # Algorithm 3: epsilon, minimum document coverage of a topic
    trim: float = 0.1                  # Algorithms 3 and 4: eta
    ensemble_lambda: float = 2 / 3     # Algorithm 4: SCORE = lambda H1 + (1 - lambda)(1 - H2)
    # a profile's weights: "strength", each learner's own magnitudes (Section 3.1, as published), or
    # "share", each learner's words weighted by the share of the job's stragglers that show them
    # (Section 5.1; learners.share_weighted). Issue 28: measured, not adopted (docs/HOUND.md).
    profile_weights: str = "strength"
    # "share": a straggler's latency is above this quantile (the quantile's default, not the run's)
    straggler_quantile: float = linked(WarehouseSettings, "quantile", from_run=False)
    # hound_with_nodes (machine_evidence): a machine is judged from at least this many tasks of other
    # jobs, the node ranking's minimum (Ouyang et al.; root setting node_min_tasks, written once there)
    node_min_tasks: int = linked(NodeRankingSettings, "node_min_tasks")
    workers: int = 1                   # processes over jobs

    def __post_init__(self) -> None:
        check_linked(self)   # the run's settings, by their declarations
        require(0 < self.l1_ratio <= 1, "hound_l1_ratio", self.l1_ratio, "a number in (0, 1]")
        require(isinstance(self.ssw_min_grid, int) and self.ssw_min_grid >= 2, "hound_ssw_min_grid",
               self.ssw_min_grid, "an integer >= 2")
        require(self.ssw_sign_tol is None or self.ssw_sign_tol >= 0, "hound_ssw_sign_tol", self.ssw_sign_tol,
               "None or a number >= 0")
        require(0 <= self.propensity_clip < 0.5, "hound_propensity_clip", self.propensity_clip, "a number in [0, 0.5)")
        require(isinstance(self.k_min, int) and self.k_min >= 2, "hound_k_min", self.k_min, "an integer >= 2")
        require(0 <= self.coverage_stop < 1, "hound_coverage_stop", self.coverage_stop, "a number in [0, 1)")
        require(0 <= self.trim < 0.5, "hound_trim", self.trim, "a number in [0, 0.5)")
        require(0 <= self.ensemble_lambda <= 1, "hound_ensemble_lambda", self.ensemble_lambda, "a number in [0, 1]")
        require(self.profile_weights in PROFILE_WEIGHTS, "hound_profile_weights", self.profile_weights,
               f"one of {', '.join(PROFILE_WEIGHTS)}")
        require(isinstance(self.workers, int) and self.workers >= 1, "hound_workers", self.workers, "an integer >= 1")

    def as_dict(self) -> dict:
        return asdict(self)
