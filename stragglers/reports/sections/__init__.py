"""The report's sections, one topic a module: the answer box and the story, the operator's budgets and
view, Spark's answer, reproducing the paper (its numbers, tables, figures, captions), re-executions,
and the three other systems (Hound, node ranking, failure prediction)."""
