"""The paper's comparison tables over every trace in the warehouse."""


import dagster as dg

from assets.evaluation import baseline_eval, nurd_eval


@dg.asset(deps=[nurd_eval, baseline_eval], group_name="reports", kinds={"python"},
          description="Table 3, F1 over time and job completion time for every trace in the warehouse.")
def comparison_tables() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"status": "not built yet"})
