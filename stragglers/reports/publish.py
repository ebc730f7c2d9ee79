"""Publishing the report: tables as CSV + Parquet, plots as PNG, one ``report.md`` and
``report.html``, written to a temporary sibling directory and then swapped in by rename, so a
reader never sees a half-written report."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Mapping

import pandas as pd

from stragglers.reports.html import render_html
from stragglers.reports.render import markdown_table


def write_report(out_dir, tables: Mapping[str, pd.DataFrame], plots: Mapping[str, object],
                 *, title: str = "Straggler prediction: comparison with NURD (MLSys 2022)",
                 notes: str | None = None, markdown_tables: Mapping[str, pd.DataFrame] | None = None,
                 max_md_rows: int = 500, summary: str | None = None,
                 captions: Mapping[str, tuple[str, str]] | None = None,
                 figures_after: Mapping[str, list[str]] | None = None) -> Path:
    """Write ``<name>.csv`` and ``<name>.parquet`` per table, ``<name>.png`` per
    plot (a path to an existing PNG, or a matplotlib Figure), and ``report.md``
    linking them and embedding each table as Markdown (``markdown_tables[name]``
    instead of the table itself when given, e.g. a formatted view; at most
    ``max_md_rows`` rows). Everything is written to a temporary sibling
    directory that then replaces ``out_dir`` by rename, so a reader never sees
    a half-written report. ``summary`` opens the report ("What this run
    shows"); ``captions`` maps a table name, or "fig:" + a plot name, to its
    (heading, caption); ``figures_after`` places plots right after a table
    (the others go under "Figures"). ``report.html`` (self-contained, see
    ``stragglers.reports.html``) is published with report.md. Returns the
    path of report.md.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        md = [f"# {title}", ""]
        if notes:
            md += [notes.strip(), ""]
        if summary:
            md += ["## What this run shows", "", summary.strip(), ""]
        captions = captions or {}
        placed = {p for names in (figures_after or {}).values() for p in names}

        def figure(name: str, plot) -> list[str]:
            _check_name(name)
            dest = tmp / f"{name}.png"
            if hasattr(plot, "savefig"):
                plot.savefig(dest, dpi=110, bbox_inches="tight", format="png")
            else:
                shutil.copyfile(Path(plot), dest)
            heading, caption = captions.get(f"fig:{name}", (name, ""))
            return [f"### {heading}", "", f"![{heading}]({name}.png)", "",
                    *([f"> {caption}", ""] if caption else [])]

        for name, df in tables.items():
            _check_name(name)
            df.to_csv(tmp / f"{name}.csv", index=False)
            df.to_parquet(tmp / f"{name}.parquet", index=False)
            view = (markdown_tables or {}).get(name, df)
            heading, caption = captions.get(name, (name, ""))
            md += [f"## {heading}", "", *([f"> {caption}", ""] if caption else []),
                   f"Files: [{name}.csv]({name}.csv), [{name}.parquet]({name}.parquet)"
                   f" ({len(df)} rows)", ""]
            if len(view) > max_md_rows:
                md += [f"First {max_md_rows} of {len(view)} rows:", ""]
                view = view.head(max_md_rows)
            md += [markdown_table(view, numparse=name not in (markdown_tables or {})), ""]
            for p in (figures_after or {}).get(name, []):
                if p in plots:
                    md += figure(p, plots[p])
        rest = [n for n in plots if n not in placed]
        if rest:
            md += ["## Figures", ""]
        for name in rest:
            md += figure(name, plots[name])
        (tmp / "report.md").write_text("\n".join(md), encoding="utf-8")
        render_html(tmp / "report.md")
        os.chmod(tmp, 0o755)
        _swap_in(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir / "report.md"


def _check_name(name: str) -> None:
    if not name or "/" in name or "\\" in name or name.startswith(".") or name == "report":
        raise ValueError(f"bad table/plot name: {name!r}")


def _swap_in(tmp: Path, out_dir: Path) -> None:
    """Replace out_dir by tmp: the old report stays whole until the new one is in place."""
    if out_dir.exists():
        old = out_dir.parent / f".{out_dir.name}.old-{uuid.uuid4().hex[:8]}"
        os.rename(out_dir, old)
        try:
            os.rename(tmp, out_dir)
        except BaseException:
            os.rename(old, out_dir)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, out_dir)
