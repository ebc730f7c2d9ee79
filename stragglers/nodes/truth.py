"""The embedded trace's planted machine slowdowns (ground truth for the checks of A.6).

The generator draws machine ids, server types and slowdowns first from its seeded
generator (stragglers/traces/synth/google.py, generate_google); the same draws
are replayed here without writing a trace. tests/test_nodes.py checks that the ids
match the generated machine_events.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stragglers.traces.synth import model as M
from stragglers.traces.synth.google_jobs import _machines


def planted_machines(seed: int = 2011, n_machines: int = 600) -> pd.DataFrame:
    """machine_id, server_type (index into OUYANG_SERVER_TYPES), slowdown (latency factor)
    and chronic (slowdown > CHRONIC_SLOWDOWN: the planted node-level stragglers)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2011]))
    ids = _machines(rng, n_machines)
    mtype = M.machine_types(rng, n_machines)
    slow = M.machine_slowdowns(rng, n_machines)
    return pd.DataFrame({"machine_id": ids.astype("int64"), "server_type": mtype, "slowdown": slow,
                         "chronic": slow > M.CHRONIC_SLOWDOWN})
