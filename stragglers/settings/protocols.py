"""The evaluation protocols as named settings: the authors' released code (``AUTHORS``), the operator's
view (``OPERATOR``) and this pipeline's own ("ours"), and the typed settings of a run with its preset
applied (``typed_settings``). Settings only: what a protocol does to a job is
stragglers/prediction/replay/protocol.py; docs/EVALUATION.md cites the released code's lines."""

from __future__ import annotations

from typing import Mapping

from stragglers.settings import Settings
from stragglers.settings.prediction import PROTOCOL_CHOICES, PROTOCOLS, EvaluationSettings
from stragglers.settings.warehouse import SelectionSettings, format_clock_interval

#: The authors' protocol: setting -> the released code's value (docs/EVALUATION.md cites the lines).
AUTHORS: dict[str, object] = {
    "latency_normalization": "job_minmax",   # run_ts.py: job = (df_sel - min) / (max - min), Latency included
    "alpha": 0.0,                            # run_ts.py: --gamma default 0; delta = 1/(1+rho) - gamma
    "feature_mode": "reference",             # run_ts.py + utils_ts.fun_df_cumsum: features normalized by the final row
    "quantiles": "sorted_index",             # run_ts.py: alpha = lat_sort[int(tail*n)], alpha_pt = lat_sort[int(pt*n)]
    "test_set": "length_filter",             # run_ts.py: "Remove bad true straggler" / "Remove bad normal tasks"
    "horizon": "longest_straggler",          # run_ts.py: for k in range(2, ts_init_size); utils_ts: read at [-2]
    "latency": "usage_windows",              # utils_ts.fun_df_cumsum: total_period = sum(df.ET - df.ST)
    "regressor": "sklearn",                  # run_ts.py: GradientBoostingRegressor(random_state=rs)
    "propensity_max_iter": 100,              # run_ts.py: LogisticRegression(random_state=rs, solver='lbfgs')
    "baseline_params": "authors",            # run_od.py / run_ts.py baselines (each class's authors_params)
}
SELECTION_FIELDS = ("feature_mode",)

#: The operator's protocol (docs/EVALUATION.md "Two protocols"): what a scheduler has
#: (a threshold estimated from what is known at t, checkpoints until the job ends) and does
#: (a speculative copy beside the original, paid in machine time). Everything else is ours.
OPERATOR: dict[str, object] = {
    "threshold": "online",
    "horizon": "end",
    "intervention": "speculate",
}
#: The settings that make a run the operator's view (its results go to the operator_* tables).
OPERATOR_FIELDS = tuple(OPERATOR)


def is_operator(s: EvaluationSettings) -> bool:
    """True when any setting has an operator's value (results are the operator's view)."""
    return any(getattr(s, k) == v for k, v in OPERATOR.items())


def both_views(evaluation: EvaluationSettings) -> tuple[EvaluationSettings, EvaluationSettings]:
    """(the configured evaluation, the other view): the evaluation assets run both, so one warehouse
    holds the paper's protocol and the operator's. The other view of a paper's protocol
    (ours or authors) is it with the operator's settings; of an operator's, it with the paper's."""
    if is_operator(evaluation):
        return evaluation, evaluation.replace(**{k: PROTOCOL_CHOICES[k][0] for k in OPERATOR})
    return evaluation, evaluation.replace(**OPERATOR)


def protocol_settings(protocol: str, evaluation: EvaluationSettings, selection: SelectionSettings,
                      ) -> tuple[EvaluationSettings, SelectionSettings]:
    """``evaluation`` and ``selection`` with the preset applied ("ours" leaves them as they are)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"setting NURD_PROTOCOL={protocol!r} is invalid: expected one of {PROTOCOLS}")
    if protocol == "ours":
        return evaluation, selection
    return with_settings(evaluation, selection, AUTHORS if protocol == "authors" else OPERATOR)


def typed_settings(settings: Settings) -> tuple[EvaluationSettings, SelectionSettings]:
    """The evaluation's and the selection's typed settings from the composed settings, with the
    protocol preset applied."""
    interval = {"clock_interval_s": format_clock_interval(settings.trace, settings.clock_interval_s)}
    ev = EvaluationSettings.of(settings, **interval)
    sel = SelectionSettings.of(settings, **interval)
    return protocol_settings(settings.protocol, ev, sel)


def with_settings(evaluation: EvaluationSettings, selection: SelectionSettings, values: Mapping[str, object]
                  ) -> tuple[EvaluationSettings, SelectionSettings]:
    sel = {k: v for k, v in values.items() if k in SELECTION_FIELDS}
    ev = {k: v for k, v in values.items() if k not in SELECTION_FIELDS}
    return evaluation.replace(**ev), selection.replace(**sel)


def ours_value(name: str) -> object:
    """This pipeline's default of a protocol setting."""
    if name in SELECTION_FIELDS:
        return getattr(SelectionSettings(), name)
    return getattr(EvaluationSettings(workers=1), name)


def is_ours(s: EvaluationSettings) -> bool:
    """Whether ``s`` is this pipeline's own protocol (every choice at its default)."""
    # baseline_params acts through the method factories, intervention through the completion simulation
    return all(getattr(s, k) == v[0] for k, v in PROTOCOL_CHOICES.items()
               if k not in ("baseline_params", "intervention"))
