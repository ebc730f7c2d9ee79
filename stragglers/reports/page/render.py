"""The one Markdown-table and the one PNG-embedding helper of the project."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pandas as pd


def markdown_table(df: pd.DataFrame, floatfmt: str = ".3f", max_rows: int | None = None,
                   numparse: bool = True) -> str:
    """GitHub-style Markdown table (tabulate); NaN shown empty, no index; at most
    ``max_rows`` rows, with a line saying how many were left out. ``numparse=False``
    prints strings as they are (views whose numbers are formatted already)."""
    from tabulate import tabulate

    if not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index()
    if df.empty:
        return "_(no rows)_"
    shown = (df if max_rows is None else df.head(max_rows)).copy()
    for col in shown.columns:
        # a float column holding only whole numbers and NaN (e.g. a count read back through a NULL)
        # prints as a count; not a 0/1 rate that happens to be whole
        s = shown[col]
        if pd.api.types.is_float_dtype(s) and s.notna().any() and (s.dropna() % 1 == 0).all() \
                and (s.dropna().abs() > 1).any():
            shown[col] = s.astype("Int64")
    # object columns keep Python ints (tabulate would print every number with floatfmt) and
    # None, to which tabulate's missingval applies
    shown = shown.astype(object).where(shown.notna(), None)
    text = tabulate(shown, headers="keys", tablefmt="github", floatfmt=floatfmt, showindex=False, missingval="",
                    disable_numparse=not numparse)
    if len(df) > len(shown):
        text += f"\n\n({len(df) - len(shown)} more rows not shown)"
    return text


def png_data_url(image) -> str:
    """A PNG (a matplotlib Figure, closed afterwards, or a path to a .png file) as a data URL."""
    if hasattr(image, "savefig"):
        import matplotlib.pyplot as plt

        buf = io.BytesIO()
        image.savefig(buf, format="png", dpi=90, bbox_inches="tight")
        plt.close(image)
        data = buf.getvalue()
    else:
        data = Path(image).read_bytes()
    return "data:image/png;base64," + base64.b64encode(data).decode()


def markdown_image(image, alt: str) -> str:
    return f"![{alt}]({png_data_url(image)})"
