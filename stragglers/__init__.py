"""Domain code of the straggler-prediction pipeline (no Dagster imports here)."""

from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
