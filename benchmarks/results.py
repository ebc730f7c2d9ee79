"""What every measuring script does with its results (``from benchmarks.results import publish``)."""

from __future__ import annotations

import json
from pathlib import Path


def publish(res: dict, text: str, *, raw: Path, out: Path | None) -> None:
    """The raw results as JSON at ``raw`` (beside the work files); the report ``text`` printed and,
    with ``--out``, written to ``out``."""
    raw.write_text(json.dumps(res, indent=1, default=str))
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
