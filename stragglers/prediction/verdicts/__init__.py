"""Every method at every budget of extra machine time, and who wins: the sweep of each method's points
through the engine, tuning on earlier jobs, the verdict on later jobs, the budget tables, and the
operator's answer on Spark."""
