"""Dagster glue: read settings, run SQL or call a library function, attach metadata.

Domain logic lives in the Dagster-free package ``stragglers``. Installed, this package is
``nurd_pipeline.assets`` (pyproject.toml maps the folder), so modules here import each other relatively.
"""
