"""Settings of failure prediction and proactive cloning (defaults written once here)."""

from __future__ import annotations

from stragglers.settings.prediction import PredictionSettings
from stragglers.settings.stage import SettingsView, StageSettings, constant, linked, setting


class FailurePredictionSettings(StageSettings):
    # failure prediction and proactive cloning, El-Sayed et al. (stragglers/failures, docs/FAILURES.md)
    failure_trees: int = setting(50, ge=1, doc="failure prediction: random-forest trees")
    failure_max_train_rows: int = setting(50_000, ge=100)
    """failure prediction: training rows per forest (a seeded sample beyond, reported)"""
    clone_retries: int = setting(4, ge=0, doc="proactive cloning: retry cap R (Algorithm 1)")
    clones: int = setting(1, ge=1, doc="proactive cloning: clones C per prediction (Algorithm 1)")
    clone_tasks: int = setting(25_000, ge=10,
                               doc="proactive cloning: tasks in each of the training and evaluation sets")


class FailureSettings(SettingsView):
    trees = linked(FailurePredictionSettings, "failure_trees")                # random-forest trees (Section V-A)
    train_fraction: float = constant(0.7, setting="failure_train_fraction", gt=0, lt=1)   # share of jobs in the training set (split by job)
    seed = linked(PredictionSettings, "seed")                          # split, forest and sampling seed
    thresholds: tuple[float, ...] = constant((0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), setting="thresholds",
                                             gt=0, lt=1)   # Figs. 7, 8, 10 (left)
    sampling_ratios: tuple[float, ...] = constant((0.0, 0.25, 0.5, 1.0), setting="sampling_ratios", ge=0)   # positives per negative in training (0 = as is)
    # training rows per forest (seeded sample beyond)
    max_train_rows = linked(FailurePredictionSettings, "failure_max_train_rows")
    usage_window_s: int = 300             # "first 5 minutes" of usage (Table IV)
    clone_retries = linked(FailurePredictionSettings, "clone_retries")        # R of Algorithm 1
    clones = linked(FailurePredictionSettings, "clones")                      # C of Algorithm 1
    # tasks in each cloning train / evaluation set (VI-B)
    clone_tasks = linked(FailurePredictionSettings, "clone_tasks")
    clone_thresholds: tuple[float, ...] = (0.1, 0.5, 0.9, 0.95, 0.99)  # Table V rows
    clone_counts: tuple[int, ...] = (1, 2, 3)                          # Table V columns
