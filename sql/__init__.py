"""The SQL queries, one file per table, as package data (``stragglers.sql`` once installed)."""
