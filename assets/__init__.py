"""Dagster glue: read settings, run SQL or call a library function, attach metadata.

Domain logic lives in the Dagster-free package ``nurd``.
"""
