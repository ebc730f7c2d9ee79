"""Last stage, reports: the comparison tables, plots and the report files."""
