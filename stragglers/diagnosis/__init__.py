"""Hound (Zheng and Lee, POMACS 2018, seed 003): why a job's stragglers straggle.

Per job, three base learners turn task metrics vs latency into causality
profiles (``learners``); LDA turns each learner's profiles into topics and
per-job topic mixtures (``topics.meta_learn``, Algorithm 3); an ensemble keeps
the topics several learners agree on (``topics.ensemble``, Algorithm 4); the
topics are named after Hound's Table 4 (``vocabulary``). ``truth`` checks the
diagnosis against the embedded trace's planted causes; ``explain`` explains
NURD's flagged tasks. No Dagster here: ``assets/diagnosis.py`` is the glue.
"""

from stragglers.settings.diagnosis import HoundSettings

__all__ = ["HoundSettings"]
