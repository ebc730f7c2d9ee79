"""Dagster glue: read settings, run SQL or call a library function, attach metadata.

Domain logic lives in the Dagster-free package ``stragglers``. Installed, this package is
``nurd_pipeline.assets`` (pyproject.toml maps the folder), so modules here import each other relatively.
"""

import re
import warnings

# Dagster 1.13 marks these two APIs beta although it has no stable replacement for either (a source
# asset with a data version; one run for a backfill): the project uses them on purpose, so their
# notices are silenced where the asset modules are defined, for a checkout and an installed wheel alike.
# Any other warning, including new ones from Dagster, still shows.
for _beta in ("Function `observable_source_asset` is currently in beta",
              "Parameter `backfill_policy` of function `asset` is currently in beta"):
    warnings.filterwarnings("ignore", message=re.escape(_beta))
