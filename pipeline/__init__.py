"""``nurd_pipeline.defs`` is the Dagster entry point (``dagster ... -m nurd_pipeline``; in a checkout
``-m pipeline`` loads the same definitions)."""

from .definitions import defs

__all__ = ["defs"]
