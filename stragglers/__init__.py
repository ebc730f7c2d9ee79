"""Domain code of the straggler-prediction pipeline (no Dagster imports here)."""

from importlib.resources import files
from pathlib import Path

#: the folder of the SQL files (sql/ in a checkout): package data ``stragglers.sql``, so an
#: installed wheel finds them beside the code; an installed package is a real folder on disk
SQL_DIR = Path(str(files("stragglers.sql")))
