"""The operator's console commands: answers from a directory of logs, the same code as the Dagster path."""
