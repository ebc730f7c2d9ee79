"""Stage 3, prediction: the online replay, NURD and every baseline, metrics and completion time."""
