"""Publishing the report: tables as CSV + Parquet, plots as PNG, one ``report.md`` and
``report.html``, written to a temporary sibling directory and then swapped in by rename, so a
reader never sees a half-written report."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from stragglers.reports.page.glossary import Term, glossary_markdown, used_terms
from stragglers.reports.page.html import BAND_MARK, render_html
from stragglers.reports.page.render import markdown_table

#: The width (px) a table may take in report.html read at 1280 px (html._CSS: the body is at most
#: 1180 px wide); a wider table is split, its later columns in a second table with the same rows.
PAGE_PX = 1170


def _band_rows(view: pd.DataFrame) -> pd.Series:
    """Which rows of a view are a family's header row (``BAND_MARK``), not a row of the table."""
    if not len(view.columns):
        return pd.Series(False, index=view.index)
    return view.iloc[:, 0].astype(str).str.startswith(BAND_MARK)


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
    family header rows aside), and the sentence that says it once. In a banded view the first column
    also holds the family header rows' names: dropped, it hands them to the next column."""
    same = {}
    banded = bool(len(view.columns)) and _band_rows(view).any()
    for col in view.columns:
        cells = _cells(view, col)
        if len(cells) >= 3 and len(set(cells)) == 1:
            same[col] = cells[0] or "none"      # an empty column says so once, not with blank cells
    if not same or len(same) == len(view.columns):
        return view, ""
    out = view.drop(columns=list(same))
    if banded and view.columns[0] in same:
        heads = _band_rows(view)
        out.loc[heads, out.columns[0]] = view.loc[heads, view.columns[0]]
    return out, "In every row, " + "; ".join(f"{col}: {value}" for col, value in same.items()) + "."


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


#: the most rows a table shows: a longer one shows its first rows and links its CSV file, every row
MAX_SHOWN_ROWS = 30
_REF = re.compile(r"\{(table|fig):([\w.-]+)\}")


def _numbers(shown: Sequence[str], figure_order: Sequence[str]) -> dict[str, str]:
    """One numbering per kind, in the order the page shows them: "table:<name>" -> "Table 3",
    "fig:<name>" -> "Figure 2"."""
    out = {f"table:{name}": f"Table {i}" for i, name in enumerate(shown, 1)}
    out |= {f"fig:{name}": f"Figure {i}" for i, name in enumerate(figure_order, 1)}
    return out


def _refer(text: str, numbers: Mapping[str, str]) -> str:
    """``text`` with its references ({table:name}, {fig:name}) replaced by their numbers (a reference to
    a block the page does not show reads "below")."""
    return _REF.sub(lambda m: numbers.get(f"{m.group(1)}:{m.group(2)}", "below"), text)


def write_report(out_dir, tables: Mapping[str, pd.DataFrame], plots: Mapping[str, object],
                 *, title: str = "Straggler prediction: comparison with NURD (MLSys 2022)",
                 notes: str | None = None, markdown_tables: Mapping[str, pd.DataFrame] | None = None,
                 max_md_rows: int = MAX_SHOWN_ROWS, summary: str | None = None,
                 captions: Mapping[str, tuple[str, str]] | None = None,
                 figures_after: Mapping[str, list[str]] | None = None,
                 figures_before: Mapping[str, list[str]] | None = None,
                 chapters: Mapping[str, tuple[str, str]] | None = None,
                 text_after: Mapping[str, str] | None = None, files_only: Sequence[str] = (),
                 terms: Sequence[Term] = ()) -> Path:
    """Write ``<name>.csv`` and ``<name>.parquet`` per table, ``<name>.png`` per plot (a path to an
    existing PNG, or a matplotlib Figure), and ``report.md`` linking them, then ``report.html``
    (self-contained, stragglers.reports.page.html) from it. Everything is written to a temporary sibling
    directory that then replaces ``out_dir`` by rename, so a reader never sees a half-written report.
    Returns the path of report.md.

    The page: ``title``, ``notes``, then ``summary`` under "What this run shows" (the answer); then
    each table of ``tables`` in order (``files_only`` ones only as files), its heading and caption
    (``captions[name]``: (heading, caption); "fig:" + a plot's name for a figure's), the link to its
    files, its view (``markdown_tables[name]``, else the table; at most ``max_md_rows`` rows, the
    CSV file for every row), ``text_after[name]``, and the figures ``figures_after[name]`` (those of
    ``figures_before[name]`` come before its heading; figures placed nowhere go under "Figures").
    ``chapters[name]`` = (heading, intro) opens a chapter before that table (its tables are then
    one level down). Tables and figures are numbered in the order shown, one numbering each; a
    caption or text refers to one as {table:name} or {fig:name}. The page ends with the glossary
    of the ``terms`` it uses.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    captions, chapters = captions or {}, chapters or {}
    before, after = figures_before or {}, figures_after or {}
    shown = [name for name in tables if name not in files_only]
    placed = [p for name in shown for p in (*before.get(name, []), *after.get(name, [])) if p in plots]
    rest = [n for n in plots if n not in placed]
    numbers = _numbers(shown, placed + rest)
    level = "###" if chapters else "##"
    try:
        md = [f"# {title}", ""]
        if notes:
            md += [notes.strip(), ""]
        if summary:
            md += ["## What this run shows", "", _refer(summary.strip(), numbers), ""]

        def figure(name: str, plot) -> list[str]:
            _check_name(name)
            dest = tmp / f"{name}.png"
            if hasattr(plot, "savefig"):
                plot.savefig(dest, dpi=110, bbox_inches="tight", format="png")
            else:
                shutil.copyfile(Path(plot), dest)
            heading, caption = captions.get(f"fig:{name}", (_words(name), ""))
            heading = f"{numbers[f'fig:{name}']}. {heading}"
            return [f"{level} {heading}", "", f"![{heading}]({name}.png)", "",
                    *([f"> {_refer(caption, numbers)}", ""] if caption else [])]

        for name, df in tables.items():
            _check_name(name)
            df.to_csv(tmp / f"{name}.csv", index=False)
            df.to_parquet(tmp / f"{name}.parquet", index=False)
            if name in files_only:
                continue
            if name in chapters:
                heading, intro = chapters[name]
                md += [f"## {heading}", "", *([_refer(intro, numbers), ""] if intro else [])]
            for p in before.get(name, []):
                if p in plots:
                    md += figure(p, plots[p])
            view = (markdown_tables or {}).get(name, df)
            heading, caption = captions.get(name, (_words(name), ""))
            md += [f"{level} {numbers[f'table:{name}']}. {heading}", "",
                   *([f"> {_refer(caption, numbers)}", ""] if caption else [])]
            real = ~_band_rows(view)
            total = int(real.sum())
            # at most max_md_rows rows of the table (family header rows do not count), none dangling
            cut = view.iloc[:int(real.to_numpy().nonzero()[0][max_md_rows])] if total > max_md_rows else view
            shown = int((~_band_rows(cut)).sum())
            md += [f"Files: [{name}.csv]({name}.csv) ({len(df)} row{'' if len(df) == 1 else 's'}"
                   + (f"; {shown} shown here" if shown != len(df) else "")
                   + f"), [{name}.parquet]({name}.parquet)", ""]
            if total > max_md_rows:
                md += [f"The first {shown} of {total} rows; every row is in [{name}.csv]({name}.csv).", ""]
                view = cut
            view, same = _same_in_every_row(view)
            if same:
                md += [same, ""]
            for i, piece in enumerate(_fit_to_page(view)):
                if i:
                    md += ["The same rows, continued:", ""]
                md += [markdown_table(piece, numparse=name not in (markdown_tables or {})), ""]
            if (text_after or {}).get(name):
                md += [_refer(text_after[name], numbers), ""]
            for p in after.get(name, []):
                if p in plots:
                    md += figure(p, plots[p])
        if rest:
            md += ["## Figures", ""]
        for name in rest:
            md += figure(name, plots[name])
        text = "\n".join(md)
        used = used_terms(text, terms)
        if used:
            text += "\n\n## Glossary\n\n" + glossary_markdown(used) + "\n"
        (tmp / "report.md").write_text(text, encoding="utf-8")
        render_html(tmp / "report.md", terms=used)
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
