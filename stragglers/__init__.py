"""Domain code of the straggler-prediction pipeline (no Dagster imports here)."""

from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"

GOOGLE_FEATURES = (
    "mcu", "maxcpu", "scpu", "cmu", "amu", "maxmu", "upc", "tpc",
    "mio", "maxio", "mdk", "cpi", "mai", "ev", "fl",
)
ALIBABA_FEATURES = ("cpu_avg", "cpu_max", "mem_avg", "mem_max")
