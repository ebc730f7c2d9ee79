"""``pipeline.defs`` is the Dagster entry point (``dagster ... -m pipeline``)."""

from pipeline.definitions import defs

__all__ = ["defs"]
