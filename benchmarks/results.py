"""What every measuring script does with its results (``from benchmarks.results import publish``; a script
that keeps its section of a markdown file: ``publish_section``)."""

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


#: the help of a script's --write
WRITE_HELP = "the markdown file whose section to replace"


def write_section(path: Path, text: str, section: str) -> None:
    """Replace the section (up to the next '## ' heading) or append it."""
    old = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    start = next((i for i, line in enumerate(old) if line.strip() == section), None)
    if start is None:
        new = old + ([""] if old and old[-1] else []) + text.splitlines()
    else:
        end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")), len(old))
        new = old[:start] + text.splitlines() + ([""] + old[end:] if end < len(old) else [])
    path.write_text("\n".join(new) + "\n", encoding="utf-8")


def publish_section(text: str, path: Path | None, section: str) -> None:
    """The report ``text`` printed and, with ``--write``, in place of its ``section`` of ``path``."""
    print(text)
    if path:
        write_section(path, text, section)
