"""Registry of every method: one line per method.

``NURD_FAMILY`` is evaluated by asset ``nurd_eval`` (one shared fit per
checkpoint); ``BASELINES`` are the partitions of asset ``baseline_eval``.
"""

from __future__ import annotations

from nurd.methods.base import CannotFit, JobContext, Method, TaskSet

NURD_FAMILY = ("nurd", "nurd_nc", "gbtr")

# name -> Method subclass; filled by the modules below (one line each).
BASELINES: dict[str, type[Method]] = {}

__all__ = ["BASELINES", "NURD_FAMILY", "CannotFit", "JobContext", "Method", "TaskSet"]
