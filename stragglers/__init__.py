"""Domain code of the straggler-prediction pipeline (no Dagster imports here)."""

from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"

# declared once, in the trace formats
from stragglers.traces.formats import ALIBABA_FEATURES, GOOGLE_FEATURES  # noqa: E402,F401
