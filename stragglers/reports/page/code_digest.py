"""The digest of the code that draws the comparison report, which docs/img/report.png carries.

scripts/screenshots.py writes it into the picture it takes (a PNG text chunk, ``KEY``); a test
compares it with today's code, so the README's picture cannot be older than the report it shows. The
code is every module of stragglers/reports (and its sub-packages) that stragglers/reports/comparison.py
imports, directly or through another (``report_modules``), less the computations the report only
reads (``COMPUTATIONS``). File contents, not times: a fresh clone gets the same digest.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

REPORTS = Path(__file__).resolve().parent.parent
KEY = "report-code-digest"
#: modules of stragglers/reports that compute tables rather than show them (paths under it)
COMPUTATIONS = ("compute/budget_tables.py", "freshness.py", "compute/simulations.py")


def _file(module: str) -> str:
    """``stragglers.reports.page.views`` -> ``page/views.py`` (a path under stragglers/reports)."""
    return "/".join(module.split(".")[2:]) + ".py"


def _imports(path: Path) -> set[str]:
    """The stragglers.reports modules ``path`` imports (paths under stragglers/reports)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "stragglers.reports" or node.module.startswith("stragglers.reports."):
                out.add(_file(node.module))
                out |= {_file(f"{node.module}.{a.name}") for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {_file(a.name) for a in node.names if a.name.startswith("stragglers.reports.")}
    return {name for name in out if (REPORTS / name).is_file()}


def report_modules(root: str = "comparison.py") -> list[str]:
    """``root`` and every stragglers/reports module it imports, transitively, computations left out
    (paths under stragglers/reports)."""
    seen, todo = set(), [root]
    while todo:
        name = todo.pop()
        if name in seen or name in COMPUTATIONS:
            continue
        seen.add(name)
        todo += sorted(_imports(REPORTS / name))
    return sorted(seen)


def report_code_digest() -> str:
    """sha256 over the report's modules (name and text, line ends normalized)."""
    h = hashlib.sha256()
    for name in report_modules():
        h.update(name.encode() + b"\0")
        h.update((REPORTS / name).read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return h.hexdigest()


def png_digest(png: Path) -> str | None:
    """The digest a picture carries (None: it carries none)."""
    from PIL import Image

    with Image.open(png) as im:
        return im.info.get(KEY)
