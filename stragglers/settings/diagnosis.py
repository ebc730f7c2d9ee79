"""Hound's settings: ``DiagnosisSettings``, those a run sets (bounds and defaults declared once, on
the fields), and ``HoundSettings``, all Hound takes (the others are Hound's constants)."""

from __future__ import annotations


from stragglers.settings.nodes import NodeRankingSettings
from stragglers.settings.prediction import PredictionSettings
from stragglers.settings.stage import SettingsView, StageSettings, constant, linked, setting
from stragglers.settings.warehouse import WarehouseSettings


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


class HoundSettings(SettingsView):
    # Section 4.1: jobs with fewer finished tasks are left out
    min_tasks = linked(DiagnosisSettings, "hound_min_tasks")
    seed = linked(PredictionSettings, "seed")
    replicas = linked(DiagnosisSettings, "hound_replicas")        # Algorithm 1: bootstrap replicas I of BAE
    l1_ratio: float = constant(0.5, setting="hound_l1_ratio", gt=0, le=1)   # ElasticNet mix of L1 and L2 (paper: not given)
    ssw_min_grid: int = constant(50, setting="hound_ssw_min_grid", ge=2)   # SSW: grid of max(this, sqrt(M)) sampled tasks (Section 3.1, App. G)
    ssw_sign_tol: float | None = constant(None, setting="hound_ssw_sign_tol", ge=0)   # SSW sign tolerance epsilon; None = one s.e. of rho_S / 6
    adaboost_rounds = linked(DiagnosisSettings, "hound_adaboost_rounds")   # Algorithm 2: iterations I
    propensity_clip: float = constant(0.02, setting="hound_propensity_clip", ge=0, lt=0.5)   # propensities clipped to [c, 1 - c] before IPW
    words = linked(DiagnosisSettings, "hound_words")              # Algorithm 3: W words per document
    k_min: int = constant(5, setting="hound_k_min", ge=2)   # Algorithm 3: first number of topics
    coverage_stop: float = constant(0.05, setting="hound_coverage_stop", ge=0, lt=1)   # Algorithm 3: epsilon, minimum document coverage of a topic
    trim: float = constant(0.1, setting="hound_trim", ge=0, lt=0.5)   # Algorithms 3 and 4: eta
    ensemble_lambda: float = constant(2 / 3, setting="hound_ensemble_lambda", ge=0, le=1)   # Algorithm 4: SCORE = lambda H1 + (1 - lambda)(1 - H2)
    # a profile's weights: "strength", each learner's own magnitudes (Section 3.1, as published), or
    # "share", each learner's words weighted by the share of the job's stragglers that show them
    # (Section 5.1; learners.share_weighted): measured, not the default (docs/HOUND.md).
    profile_weights: str = constant("strength", setting="hound_profile_weights", choices=PROFILE_WEIGHTS)
    # "share": a straggler's latency is above this quantile (the quantile's default, not the run's)
    straggler_quantile = linked(WarehouseSettings, "quantile", from_run=False)
    # hound_with_nodes (machine_evidence): a machine is judged from at least this many tasks of other
    # jobs, the node ranking's minimum (Ouyang et al.; root setting node_min_tasks, written once there)
    node_min_tasks = linked(NodeRankingSettings, "node_min_tasks")
    workers: int = constant(1, setting="hound_workers", ge=1)   # processes over jobs
