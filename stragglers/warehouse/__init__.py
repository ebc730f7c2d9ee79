"""Stage 2, warehouse: DuckDB staging, selection and features from ``sql/``, and their validation."""
