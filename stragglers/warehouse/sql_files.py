"""Read the SQL of ``sql/`` and fill in its parameters.

Every query is a .sql file named after the table or view it builds.
Parameters are ``${name}`` placeholders (string.Template): only validated
settings and paths are substituted.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

import duckdb

from stragglers import SQL_DIR
from stragglers.trace_formats import RAW_COLUMNS


GOOGLE_VIEW_TABLES = ("job_events", "task_events", "task_usage", "machine_events")   # the raw table of each view
GOOGLE_VIEWS = tuple(f"stg_{table}" for table in GOOGLE_VIEW_TABLES)
ALIBABA_VIEWS = ("alibaba_instances", "job_candidates__alibaba")


def sql_text(name: str) -> str:
    path = SQL_DIR / f"{name}.sql"
    if not path.exists():
        raise FileNotFoundError(f"no SQL file {path}")
    return path.read_text()


def sql_path_literal(path: Path | str) -> str:
    """A path inside a single-quoted SQL literal."""
    return str(path).replace("'", "''")


def render(name: str, **params) -> str:
    try:
        return Template(sql_text(name)).substitute(**{k: str(v) for k, v in params.items()})
    except KeyError as e:
        raise KeyError(f"sql/{name}.sql needs parameter {e.args[0]!r}") from None


def create_view(con: duckdb.DuckDBPyConnection, name: str, **params) -> None:
    con.execute(render(name, **params))


def raw_read(view: str, files: Path | str, compression: str = "auto") -> str:
    """Staging view ``view``'s typed ``read_csv(...)`` of ``files`` (a file or a glob): the columns
    and types RAW_COLUMNS gives it (sql/read_raw_csv.sql)."""
    columns = ", ".join(f"'{name}': '{kind}'" for name, kind in RAW_COLUMNS[view].items())
    read = render("read_raw_csv", files=sql_path_literal(files), compression=compression, columns=columns)
    return "\n".join(line for line in read.strip().splitlines() if not line.startswith("--"))  # not the file's comment
