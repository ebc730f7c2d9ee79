"""Small helpers for report files written by the node and failure reports: figures and
markdown published under their final name only once complete (temporary name, rename)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from stragglers.reports.page.render import markdown_table


def pyplot():
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    pyplot().close(fig)
    os.replace(tmp, path)
    return path


def legend(ax, **kwargs) -> None:
    """The axes' legend when something on them is labelled: a panel with no line (a scenario or a
    node with no rows) draws none instead of an empty box and matplotlib's warning."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def md(df: pd.DataFrame, floatfmt: str = ".3f") -> str:
    return markdown_table(df, floatfmt=floatfmt) if len(df) else "(no rows)"
