"""The evaluation: every method replayed on every job of a trace and its result tables written (run),
what a method learns from earlier jobs (history), and the evaluation re-run per protocol setting
(ablation)."""
