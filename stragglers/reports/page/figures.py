"""The report's figures, legible with 26+ methods.

Every figure is drawn at the width the page shows it (``FIGURE_IN`` at ``DPI``: report.html's
column at 1280 px), with no text smaller than the page's small print (``MIN_FONT_PT``); ``_save``
records the smallest in the PNG (``min_font_px``) so a test can read it back. Every
method keeps its look from ``style.style_for`` in every figure. Line figures are small multiples:
one row of panels per trace, one panel per group of families with at most
``MAX_LINES_PER_PANEL`` methods of its own, and NURD plus the reference rules drawn in every panel
as yardsticks; lines that coincide are drawn once and named together (``coinciding``). Bar
figures are horizontal, one bar per method grouped by family, the reference rules on a shaded band
of their own. Units are on every axis.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from stragglers.reports.page.style import FAMILIES, REFERENCE_FAMILY, family_of, sort_key, style_for

MAX_LINES_PER_PANEL = 7
#: the width every figure is drawn at (inches at ``DPI``): the page's column at 1280 px is 1146 px
FIGURE_IN, DPI = 11.0, 100
#: the smallest text a figure holds (points): 9 pt at 100 dpi is 12.5 px, the page's small print is 12 px
MIN_FONT_PT = 9.0
#: panels side by side in a row of small multiples (more go to the next row)
MAX_COLUMNS = 3
YARDSTICKS = ("nurd", *FAMILIES[REFERENCE_FAMILY])
# Families drawn together in one panel (each group is split further when crowded).
PANEL_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("NURD family and reference rules", ("NURD family", REFERENCE_FAMILY)),
    ("outlier detectors", ("outlier detectors",)),
    ("PU learning, survival, Wrangler", ("PU learning", "survival / censored regression", "Wrangler")),
)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10.5, "axes.titlesize": 11, "axes.labelsize": 10.5,
                         "xtick.labelsize": 10, "ytick.labelsize": 10, "legend.fontsize": 9.5,
                         "figure.titlesize": 12, "figure.dpi": DPI, "savefig.dpi": DPI})
    return plt


def coinciding(lines: dict, atol: float) -> list[list]:
    """Groups of the names in ``lines`` (name -> values on a common grid) whose values differ nowhere
    by more than ``atol``, in the order of ``lines``: one list per line to draw."""
    groups: list[list] = []
    for name, values in lines.items():
        v = np.asarray(values, dtype=float)
        for g in groups:
            w = np.asarray(lines[g[0]], dtype=float)
            if v.shape == w.shape and np.allclose(np.nan_to_num(v, nan=-1e9), np.nan_to_num(w, nan=-1e9),
                                                  rtol=0, atol=atol):
                g.append(name)
                break
        else:
            groups.append([name])
    return groups


def together(names, label=lambda m: m) -> str:
    """A legend label for lines drawn as one: 'NURD = NURD-NC = flag all at t1'."""
    return " = ".join(label(m) for m in names)


def ordered(methods) -> list[str]:
    return sorted(dict.fromkeys(methods), key=sort_key)


def panels(methods) -> list[tuple[str, list[str]]]:
    """[(title, methods drawn)] for the methods present; yardsticks in every panel."""
    present = ordered(methods)
    grouped = {f for _, fams in PANEL_GROUPS for f in fams}
    groups = [(title, [m for m in present if family_of(m) in fams]) for title, fams in PANEL_GROUPS]
    rest = [m for m in present if family_of(m) not in grouped]
    if rest:
        groups.append(("other methods", rest))
    out = []
    yard = [m for m in present if m in YARDSTICKS]
    for title, members in groups:
        own = [m for m in members if m not in YARDSTICKS]
        if not own and title != PANEL_GROUPS[0][0]:
            continue
        chunks = [own[i:i + MAX_LINES_PER_PANEL] for i in range(0, len(own), MAX_LINES_PER_PANEL)] or [[]]
        for n, chunk in enumerate(chunks, 1):
            label = title if len(chunks) == 1 else f"{title} ({n}/{len(chunks)})"
            drawn = ordered([*chunk, *yard])
            if drawn:
                out.append((label, drawn))
    return out


#: Offsets (points) tried in turn for a point's label: beside it first, then further above and below.
_LABEL_OFFSETS = tuple((dx, dy) for dy in (3, -10, 12, -19, 21, -28, 30, -37, 39, -46)
                       for dx in (5, -5))


def label_points(ax, xs, ys, labels, *, fontsize: float = MIN_FONT_PT, merge_px: float = 8.0) -> list:
    """Write ``labels`` beside the points (``xs``, ``ys``, data coordinates) so that no label lies on
    another, on a point, or outside the axes: points closer than ``merge_px`` pixels share one label
    (their names joined), and each label takes the first offset of ``_LABEL_OFFSETS`` where it fits,
    with a thin line back to its point when it had to move away. Call it once the axes' limits are
    final. Returns the label Text artists."""
    renderer = ax.figure.canvas.get_renderer()
    pts = ax.transData.transform(np.c_[np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)])
    groups: list[tuple[np.ndarray, list[str]]] = []
    for p, name in zip(pts, labels):
        for g in groups:
            if np.hypot(*(g[0] - p)) <= merge_px:
                g[1].append(name)
                break
        else:
            groups.append((p, [name]))
    box = ax.get_window_extent(renderer)
    # the markers as small boxes a label must not cover
    taken = [(p[0] - 4, p[1] - 4, p[0] + 4, p[1] + 4) for p, _ in groups]

    def overlap(a, b) -> float:
        return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))

    texts = []
    # names of points on one another share a label, wrapped so it stays narrower than the axes
    groups = [(p, ["\n".join(textwrap.wrap(", ".join(names), 40))]) for p, names in groups]
    # top-right points first: they have the least room
    for p, names in sorted(groups, key=lambda g: (-g[0][1], -g[0][0])):
        xy = ax.transData.inverted().transform(p)
        best = None
        for dx, dy in _LABEL_OFFSETS:
            t = ax.annotate(", ".join(names), xy, xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                            ha="left" if dx > 0 else "right", va="bottom", zorder=5)
            e = t.get_window_extent(renderer)
            b = (e.x0, e.y0, e.x1, e.y1)
            own = (p[0] - 4, p[1] - 4, p[0] + 4, p[1] + 4)
            outside = (max(0.0, box.x0 - b[0]) + max(0.0, b[2] - box.x1) + max(0.0, box.y0 - b[1])
                       + max(0.0, b[3] - box.y1)) * 100
            cost = outside + sum(overlap(b, o) for o in taken if o != own)
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, t, b, (dx, dy))
            else:
                t.remove()
            if cost == 0:
                break
        _, t, b, (dx, dy) = best
        if abs(dy) > 12:
            t.remove()
            t = ax.annotate(", ".join(names), xy, xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                            ha="left" if dx > 0 else "right", va="bottom", zorder=5,
                            arrowprops={"arrowstyle": "-", "color": "0.6", "linewidth": 0.5,
                                        "shrinkA": 0, "shrinkB": 3})
        taken.append(b)
        texts.append(t)
    return texts


def legend_below(ax, **kwargs):
    """The axes' legend under its x-axis label, outside the data (drawn once the layout is final)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    renderer = ax.figure.canvas.get_renderer()
    below = min(ax.xaxis.get_tightbbox(renderer).y0, ax.get_window_extent(renderer).y0)
    y = ax.transAxes.inverted().transform((0, below - 4))[1]
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, y), frameon=False,
                     **{"fontsize": MIN_FONT_PT, **kwargs})


def smallest_font_pt(fig) -> float:
    """The size of the smallest visible text of ``fig`` (points)."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=MIN_FONT_PT)


def freeze_layout(fig) -> None:
    """Run the figure's layout once and keep it: labels placed by pixel (``label_points``) stay where
    they were put."""
    fig.canvas.draw()
    fig.set_layout_engine("none")


def _save(plt, fig, path) -> Path:
    """The figure as a PNG at ``DPI``, cropped to what is drawn (at most the page's column when the
    figure is ``FIGURE_IN`` wide and nothing sticks out), its smallest text recorded in the file
    (``min_font_px``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight", format="png",
                metadata={"min_font_px": f"{smallest_font_pt(fig) * DPI / 72:.1f}"})
    plt.close(fig)
    return path


def small_multiples(table: pd.DataFrame, x: str, y: str, path, *, xlabel: str, ylabel: str,
                    title: str, label: Callable[[str], str], ylim=None, y_scale: float = 1.0) -> Path:
    """Lines of ``y`` against ``x`` per method: per trace a row (or rows) of panels at full width;
    methods whose lines coincide in a panel drawn once, named together."""
    plt = _plt()
    traces = sorted(table["trace"].unique())
    layout = panels(table["method"].unique())
    ncols = min(MAX_COLUMNS, max(1, len(layout)))
    rows_per_trace = -(-max(1, len(layout)) // ncols)
    nrows = rows_per_trace * len(traces)
    fig, axes = plt.subplots(nrows, ncols, figsize=(FIGURE_IN, 4.6 * nrows + 1.4), squeeze=False, sharey=True,
                             layout="constrained")
    span = float(np.nanmax(np.abs(table[y].to_numpy(dtype=float)))) * y_scale if len(table) else 1.0
    for r, trace in enumerate(traces):
        sub = table[table["trace"] == trace]
        for c, (panel, methods) in enumerate(layout):
            ax = axes[r * rows_per_trace + c // ncols][c % ncols]
            series = {m: sub[sub["method"] == m].sort_values(x) for m in methods}
            series = {m: s for m, s in series.items() if len(s)}
            for group in coinciding({m: s[y].to_numpy() * y_scale for m, s in series.items()}, atol=span * 0.005):
                s = series[group[0]]
                ax.plot(s[x], s[y] * y_scale, label=together(group, label), **style_for(group[0]).line_kwargs())
            ax.set_title(f"{trace}: {panel}")
            ax.set_xlabel(xlabel)
            if c % ncols == 0:
                ax.set_ylabel(ylabel)
            if ylim is not None:
                ax.set_ylim(*ylim)
            ax.grid(alpha=0.3)
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
        for c in range(len(layout), rows_per_trace * ncols):
            axes[r * rows_per_trace + c // ncols][c % ncols].set_visible(False)
    fig.suptitle(title)
    return _save(plt, fig, path)


def coinciding_lines(table: pd.DataFrame, x: str, y: str, y_scale: float = 1.0) -> list[tuple[str, list[str]]]:
    """(trace, methods) of every group of methods that ``small_multiples`` draws as one line."""
    out = []
    span = float(np.nanmax(np.abs(table[y].to_numpy(dtype=float)))) * y_scale if len(table) else 1.0
    for trace in sorted(table["trace"].unique()):
        sub = table[table["trace"] == trace]
        seen = set()
        for _, methods in panels(table["method"].unique()):
            series = {m: sub[sub["method"] == m].sort_values(x)[y].to_numpy() * y_scale for m in methods
                      if (sub["method"] == m).any()}
            for group in coinciding(series, atol=span * 0.005):
                if len(group) > 1 and tuple(group) not in seen:
                    seen.add(tuple(group))
                    out.append((trace, group))
    return out


def method_bars(table: pd.DataFrame, value: str, err: str | None, path, **kwargs) -> Path:
    """``method_bars_figure`` written to ``path``."""
    return _save(*method_bars_figure(table, value, err, **kwargs), path)


def method_bars_figure(table: pd.DataFrame, value: str, err: str | None, *, xlabel: str, title: str,
                       label: Callable[[str], str], paper: dict[str, float] | None = None,
                       scale: float = 100.0):
    """Horizontal bars, one per method, grouped by family (top to bottom), one panel per trace.

    The reference rules sit on a shaded band; ``paper`` maps a trace to the
    paper's NURD value, drawn as a vertical dashed line.
    """
    plt = _plt()
    traces = sorted(table["trace"].unique())
    n_methods = table["method"].nunique()
    fig, axes = plt.subplots(1, len(traces), figsize=(FIGURE_IN, 0.32 * n_methods + 2.2), squeeze=False)
    for ax, trace in zip(axes[0], traces):
        sub = table[table["trace"] == trace].set_index("method")
        methods = ordered(sub.index)
        ypos = np.arange(len(methods))[::-1]
        vals = sub.loc[methods, value].to_numpy(dtype=float) * scale
        errs = sub.loc[methods, err].fillna(0).to_numpy(dtype=float) * scale if err and err in sub else None
        colors = [style_for(m).color for m in methods]
        rules = [i for i, m in enumerate(methods) if family_of(m) == REFERENCE_FAMILY]
        if rules:
            lo, hi = ypos[max(rules)] - 0.5, ypos[min(rules)] + 0.5
            ax.axhspan(lo, hi, color="#fde0c5", alpha=0.6, zorder=0, label="reference rules (no model)")
        for i in range(1, len(methods)):       # a rule between families
            if family_of(methods[i]) != family_of(methods[i - 1]):
                ax.axhline(ypos[i] + 0.5, color="#999999", linewidth=0.6, zorder=1)
        ax.barh(ypos, np.nan_to_num(vals), xerr=errs, color=colors, edgecolor="white", capsize=2, zorder=2,
                error_kw={"elinewidth": 0.8, "ecolor": "#555555"})
        for y_, v, m in zip(ypos, vals, methods):
            if np.isnan(v):
                ax.text(0, y_, " no value", va="center", color="#777777")
        ax.set_yticks(ypos, [label(m) for m in methods])
        for tick, m in zip(ax.get_yticklabels(), methods):
            if style_for(m).highlight:
                tick.set_fontweight("bold")
        ax.axvline(0, color="grey", linewidth=0.8)
        if paper and trace in paper and not pd.isna(paper[trace]):
            ax.axvline(paper[trace] * scale, color="black", linestyle="--", linewidth=1,
                       label=f"paper: NURD {paper[trace] * scale:.1f}")
        ax.set_xlabel(xlabel)
        ax.set_title(f"{title}: {trace}")
        ax.grid(axis="x", alpha=0.3)
        ax.set_ylim(-0.6, len(methods) - 0.4)
    fig.tight_layout()
    for ax in axes[0]:      # below the axes: inside, it would cover a bar
        legend_below(ax)
    return plt, fig
