"""Embedded synthetic cluster traces (no Dagster, no network).

``generate_google`` writes a trace in the exact layout of Google
clusterdata-2011-2, ``generate_alibaba_2018`` one in the layout of Alibaba
cluster-trace-v2018 (batch_instance). Both are deterministic for a seed and
return a :class:`GenerationSummary` carrying the ground truth. The model is
described in docs/SYNTHETIC_TRACE.md.
"""

from .model import GENERATOR_VERSION, TRUTH_VERSION, GenerationSummary
from .google import generate_google
from .alibaba import generate_alibaba_2018

__all__ = ["GENERATOR_VERSION", "TRUTH_VERSION", "GenerationSummary", "generate_google", "generate_alibaba_2018"]
