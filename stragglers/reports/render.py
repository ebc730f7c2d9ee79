"""The one Markdown-table and the one PNG-embedding helper of the project."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pandas as pd


def markdown_table(df: pd.DataFrame, floatfmt: str = ".3f", max_rows: int | None = None) -> str:
    """GitHub-style Markdown table (tabulate); NaN shown empty, no index; at most
    ``max_rows`` rows, with a line saying how many were left out."""
    from tabulate import tabulate

    if not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index()
    if df.empty:
        return "_(no rows)_"
    shown = df if max_rows is None else df.head(max_rows)
    shown = shown.astype(object).where(shown.notna(), None)     # tabulate's missingval applies to None
    text = tabulate(shown, headers="keys", tablefmt="github", floatfmt=floatfmt, showindex=False, missingval="")
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
