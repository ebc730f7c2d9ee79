"""The generator's cause mix fitted to the real re-executions (docs/EVALUATION.md, "The generator
recalibrated to the re-executions: a variant").

The rule, written down before the later half was looked at: the real pairs' jobs split in time as
``copy_model.real_halves`` splits them; for each share of the skew causes' Hound coverages kept (the grid
below; ``model.cause_mix_coverages``), the embedded configuration generated whole (seed 2011, 48 jobs,
8 parts, only the cause mix differs) and its re-executions drawn by the generator's model
(``reexecution.generator_pairs``, the fitted noise correlation); the share whose correlation of relative
log-latencies is nearest the real one on the EARLIER half is the fit (``model.CAUSE_MIXES
['reexecution_fit']``). Then the fitted mix is checked on the later half and on all the jobs, both
statistics against the real 95% intervals, and its causes are counted (dominant cause per job).

    python -m studies.reexecution.cause_mix_fit --real REAL_DATA_DIR --work SCRATCH_DIR [--seed 0]

REAL_DATA_DIR holds warehouse.duckdb with asset ``reexecutions`` materialized on the real excerpt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.diagnosis.truth import load_truth
from stragglers.prediction.copies import reexecution as rx
from stragglers.settings import Settings
from stragglers.traces.synth import generate_google
from stragglers.traces.synth.model import CAUSE_MIXES, TRAVELLING_CAUSES
from studies.reexecution import copy_model as cm   # the same split and printing as the copy model's fit

GRID = (1.0, 0.75, 0.5, 0.35, 0.25, 0.15, 0.1, 0.05, 0.0)


def generated(work: Path, share: float, seed: int) -> dict:
    """The embedded configuration at ``share``: its re-execution statistics and its cause counts."""
    s = Settings()
    truth = work / f"truth_{share:g}"
    generate_google(work / f"raw_{share:g}", seed=2011, n_jobs=s.synthetic_jobs, n_parts=s.synthetic_parts,
                    truth_dir=truth, skew_share=share)
    tj, tt = load_truth(truth)
    st = rx.statistics(rx.generator_pairs(tt, tj, min_finished=s.min_finished, quantile=s.quantile, seed=seed),
                       seed=seed)
    finished = tt[tt.end_state == "FINISH"]
    dominant = tj.causes.str.split(":").str[0] if "causes" in tj else pd.Series(dtype=str)
    return {"share": share, **st, "skewed_finished": int(finished.cause.isin(TRAVELLING_CAUSES).sum()),
            "finished": len(finished), "dominant": dominant.value_counts().to_dict()}


def main() -> None:
    a = cm.arguments("studies.reexecution.cause_mix_fit", __doc__, "--work").parse_args()
    halves, _lives = cm.real_halves(a.real, a.real_trace)
    early = rx.statistics(halves["earlier (fit)"], seed=a.seed)
    print(f"real earlier half (fit): {cm.fmt(early)}", flush=True)
    rows = []
    for share in GRID:
        g = generated(a.work, share, a.seed)
        rows.append(g)
        print(f"skew_share={share:<5g} {cm.fmt(g)} skewed finished tasks {g['skewed_finished']} of "
              f"{g['finished']}; dominant causes {g['dominant']}", flush=True)
    curve = pd.DataFrame(rows)
    fit = float(curve.loc[(curve["corr"] - early["corr"]).abs().idxmin(), "share"])
    print(f"fitted on the earlier real jobs (nearest corr {early['corr']:.3f}): skew_share = {fit:g} "
          f"(CAUSE_MIXES['reexecution_fit'] = {CAUSE_MIXES['reexecution_fit']:g})")
    gen = next(r for r in rows if r["share"] == fit)
    for name, part in halves.items():
        st = rx.statistics(part, seed=a.seed)
        print(f"  against real {name:14s} {cm.fmt(st)}  -> {cm.within(gen, st)}")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
