"""Great Expectations suites for Hound's tables, in the style of
``stragglers.warehouse.suites`` (and registered in its ``SUITES``, so
``validate_table("hound_profiles", con, "hound_profiles", ...)`` works once this
module is imported; ``assets/diagnosis.py`` does)."""

from __future__ import annotations

import pandas as pd

from stragglers.diagnosis.vocabulary import METRICS
from stragglers.traces.synth.model import CAUSES
from stragglers.warehouse.gx_context import _gxe
from stragglers.warehouse.suites import SUITES, Frame, _between, _has_columns, _not_null, _rows_nonempty

TOL = 1e-6


def _in_set(col, values, **kw):
    return _gxe().ExpectColumnValuesToBeInSet(column=col, value_set=list(values), **kw)


def _unique(cols):
    return _gxe().ExpectCompoundColumnsToBeUnique(column_list=list(cols))


def _abs_sums(df: pd.DataFrame) -> pd.DataFrame:
    """One row per non-empty (job, learner) profile with sum |C_i| (empty profiles: the learner found nothing)."""
    if df.empty:
        return pd.DataFrame(columns=["job_id", "learner", "abs_sum"])
    s = df.assign(a=df.weight.abs()).groupby(["job_id", "learner"]).a.sum().rename("abs_sum").reset_index()
    return s[s.abs_sum > 0]


def suite_hound_profiles(params: dict, columns: list[str]) -> list[Frame]:
    """Weights in [-1, 1]; every non-empty profile sums to 1 in absolute value; known learners and metrics; one
    row per job x learner x metric."""
    rows = [_rows_nonempty(), _has_columns(["trace", "job_id", "learner", "metric", "weight"]),
            *_not_null(["trace", "job_id", "learner", "metric", "weight"]),
            _between("weight", -1.0, 1.0), _in_set("learner", ("PR", "DP", "CA")),
            _in_set("metric", METRICS.values()), _unique(["trace", "job_id", "learner", "metric"]),
            _between("n_imputed", 0)]
    sums = [_rows_nonempty(), _between("abs_sum", 1 - TOL, 1 + TOL)]
    return [Frame(None, rows, index_columns=["job_id", "learner", "metric"]),
            Frame("abs_sum", sums, derive=_abs_sums, index_columns=["job_id", "learner", "abs_sum"])]


def _ensemble_learners(df: pd.DataFrame) -> pd.DataFrame:
    ens = df[df.learner == "ENS"].copy()
    ens["n_learners"] = ens.cluster.map(lambda c: len({m.strip()[0] for m in str(c).split(",") if m.strip()}))
    return ens


def suite_hound_topics(params: dict, columns: list[str]) -> list[Frame]:
    """Known learners; named causes from Hound's nine; coverage in [0, 1]; every ensemble topic made by at
    least two learners."""
    rows = [_rows_nonempty(), _has_columns(["trace", "topic", "learner", "keywords", "weights", "cluster", "cause"]),
            *_not_null(["trace", "topic", "learner", "keywords"]), _in_set("learner", ("ENS", "PR", "DP", "CA")),
            _in_set("cause", CAUSES), _between("coverage", 0.0, 1.0), _unique(["trace", "topic"])]
    # an ensemble topic is made by at least two learners (Algorithm 4 drops the others)
    ens = [_between("n_learners", 2, 3)]
    return [Frame(None, rows, index_columns=["topic", "learner"]),
            Frame("ensemble", ens, derive=_ensemble_learners, index_columns=["topic", "cluster"])]


def _mixture_sums(df: pd.DataFrame) -> pd.DataFrame:
    if df.empty:
        return pd.DataFrame(columns=["job_id", "total"])
    return df.groupby("job_id").weight.sum().rename("total").reset_index()


def suite_hound_job_causes(params: dict, columns: list[str]) -> list[Frame]:
    """Weights in (0, 1]; each job's mixture sums to 1; named causes from Hound's nine."""
    rows = [_has_columns(["trace", "job_id", "cause", "named", "weight", "rank"]),
            *_not_null(["trace", "job_id", "cause", "named", "weight"]),
            _between("weight", 0.0, 1.0 + TOL, strict_min=True), _unique(["trace", "job_id", "cause"])]
    named = [_in_set("cause", CAUSES)]
    sums = [_between("total", 1 - TOL, 1 + TOL)]
    return [Frame(None, rows, index_columns=["job_id", "cause"]),
            Frame("named", named, derive=lambda df: df[df.named.astype(bool)], index_columns=["job_id", "cause"]),
            Frame("sum", sums, derive=_mixture_sums, index_columns=["job_id", "total"])]


def suite_hound_validation(params: dict, columns: list[str]) -> list[Frame]:
    """One row per job with a planted mixture and known dominant causes."""
    cols = ["trace", "job_id", "planted", "effective", "planted_dominant", "dominant_match", "effective_match"]
    rows = [_rows_nonempty(), _has_columns(cols), *_not_null(cols),
            _in_set("planted_dominant", CAUSES), _in_set("effective_dominant", CAUSES), _unique(["trace", "job_id"])]
    return [Frame(None, rows, index_columns=["job_id"])]


def suite_straggler_explanations(params: dict, columns: list[str]) -> list[Frame]:
    """One row per flagged task; top signal causes from Hound's nine (or none)."""
    rows = [_has_columns(["trace", "job_id", "task_id", "flagged_at_s", "job_causes", "task_signals"]),
            *_not_null(["trace", "job_id", "task_id", "flagged_at_s"]), _between("flagged_at_s", 0),
            _in_set("top_signal_cause", CAUSES), _unique(["trace", "method", "job_id", "task_id"])]
    return [Frame(None, rows, index_columns=["job_id", "task_id"])]


HOUND_SUITES = {
    "hound_profiles": suite_hound_profiles,
    "hound_topics": suite_hound_topics,
    "hound_job_causes": suite_hound_job_causes,
    "hound_validation": suite_hound_validation,
    "straggler_explanations": suite_straggler_explanations,
}
SUITES.update(HOUND_SUITES)
