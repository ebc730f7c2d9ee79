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

from stragglers.reports.html import BAND_MARK, render_html
from stragglers.reports.render import markdown_table

#: The width (px) a table may take in report.html read at 1280 px (html._CSS: the body is at most
#: 1180 px wide); a wider table is split, its later columns in a second table with the same rows.
PAGE_PX = 1170


def _cells(view: pd.DataFrame, col) -> list[str]:
    """A column's cells as the Markdown shows them, the family header rows left out."""
    body = view[~view.iloc[:, 0].astype(str).str.startswith(BAND_MARK)] if len(view.columns) else view
    return ["" if pd.isna(v) else f"{v:.3f}" if isinstance(v, float) else str(v) for v in body[col]]


def _column_px(view: pd.DataFrame, col) -> float:
    """Estimated width of a column in report.html: its widest cell (cells do not wrap) or its
    header's longest word (headers wrap), at the table's 12 px sans-serif, plus the padding."""
    words = str(col).split() or [""]
    return max(max(len(w) for w in words) * 8.0, max((len(c) for c in _cells(view, col)), default=0) * 6.9) + 17


def _same_in_every_row(view: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The view without the columns that say the same thing in every row (of three or more; the
    family header rows aside), and the sentence that says it once."""
    same = {}
    banded = bool(len(view.columns)) and view.iloc[:, 0].astype(str).str.startswith(BAND_MARK).any()
    # the first column holds the family header rows' names, where there are any
    for col in view.columns[1 if banded else 0:]:
        cells = _cells(view, col)
        if len(cells) >= 3 and len(set(cells)) == 1:
            same[col] = cells[0] or "none"      # an empty column says so once, not with blank cells
    if not same:
        return view, ""
    return (view.drop(columns=list(same)),
            "In every row, " + "; ".join(f"{col}: {value}" for col, value in same.items()) + ".")


def _fit_to_page(view: pd.DataFrame) -> list[pd.DataFrame]:
    """The view as tables no wider than ``PAGE_PX``: each repeats the leading columns that name a
    row (up to ``method``, else the first) and takes as many of the others as fit."""
    cols = list(view.columns)
    names = [str(c) for c in cols]
    keys = cols[:names.index("method") + 1] if "method" in names[:3] else cols[:1]
    rest = [c for c in cols if c not in keys]
    key_px = sum(_column_px(view, c) for c in keys)
    parts, chunk, width = [], [], key_px
    for c in rest:
        px = _column_px(view, c)
        if chunk and width + px > PAGE_PX:
            parts.append(chunk)
            chunk, width = [], key_px
        chunk.append(c)
        width += px
    parts.append(chunk)
    return [view[keys + chunk] for chunk in parts if chunk or len(parts) == 1]


def _words(name: str) -> str:
    """A heading for a table or figure that has none: its name in words."""
    return name.replace("_", " ").capitalize()


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
            heading, caption = captions.get(f"fig:{name}", (_words(name), ""))
            return [f"### {heading}", "", f"![{heading}]({name}.png)", "",
                    *([f"> {caption}", ""] if caption else [])]

        for name, df in tables.items():
            _check_name(name)
            df.to_csv(tmp / f"{name}.csv", index=False)
            df.to_parquet(tmp / f"{name}.parquet", index=False)
            view = (markdown_tables or {}).get(name, df)
            heading, caption = captions.get(name, (_words(name), ""))
            md += [f"## {heading}", "", *([f"> {caption}", ""] if caption else []),
                   f"Files: [{name}.csv]({name}.csv), [{name}.parquet]({name}.parquet)"
                   f" ({len(df)} row{'' if len(df) == 1 else 's'})", ""]
            if len(view) > max_md_rows:
                md += [f"First {max_md_rows} of {len(view)} rows:", ""]
                view = view.head(max_md_rows)
            view, same = _same_in_every_row(view)
            if same:
                md += [same, ""]
            for i, piece in enumerate(_fit_to_page(view)):
                if i:
                    md += ["The same rows, continued:", ""]
                md += [markdown_table(piece, numparse=name not in (markdown_tables or {})), ""]
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
