"""The tables the report reads, computed from the evaluations (the completion-time simulations, every
method at every budget), and the comparison report as its asset runs it."""
