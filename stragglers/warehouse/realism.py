"""How much one trace looks like another: the statistics of ``sql/trace_statistics.sql``
for two traces in the warehouse, side by side, with a distance each.

- numeric statistics: the two-sample Kolmogorov-Smirnov distance
  sup_x |F_a(x) - F_b(x)| (scipy.stats.ks_2samp), with the 5 % critical value
  c(0.05) * sqrt((n + m) / (n m)), c = 1.358 (Smirnov's asymptotic bound): two
  samples of the same distribution exceed it 5 % of the time, so a distance below
  it is indistinguishable at that sample size;
- categorical ones (end states): the total variation distance
  1/2 sum_k |p_a(k) - p_b(k)|, the KS analogue for unordered categories (it
  bounds the KS distance under any ordering of the categories);
- re-execution persistence (table reexecution_summary, asset reexecutions, when both traces have
  it): the correlation of a task's two lives' relative log-latencies and P(second life straggles |
  first did), from the trace's own re-executions or, where it has none, its generator's model;
  distance |a - b|, within target when a's value lies inside b's 95 % bootstrap interval.
  ``generator_against_real`` is the same test one way only, the generator's model inside a real
  trace's interval: the asset check ``reexecution_generator_within_real``.

Dagster-free; ``assets/realism.py`` runs it.
"""

from __future__ import annotations

import base64
import io
import math

import duckdb
import numpy as np
import pandas as pd
from scipy import stats

from stragglers.settings import SelectionSettings
from stragglers.warehouse import runner, sql_files, staged_parts, storage

TARGET = 0.2  # docs/SYNTHETIC_TRACE.md: the calibrated embedded trace is within this of the real excerpt
KS_C95 = 1.358
USAGE_COLUMNS = ("job_id", "cpu_rate", "canonical_memory", "total_page_cache", "disk_io_time", "cpi", "mai")


def usage_source(con: duckdb.DuckDBPyConnection, trace: str, sample: str | None) -> tuple[str, str]:
    """(SELECT over the usage rows, label): the trace's own task_usage when it has one, else the
    usage sample file (a CSV with a header row, like the real excerpt's), else no rows."""
    cols = ", ".join(USAGE_COLUMNS)
    if staged_parts.usage_absent_reason(con, trace) is None:
        return f"SELECT {cols} FROM stg_task_usage", "the trace's task_usage"
    if sample:
        path = sql_files.sql_path_literal(sample)
        return (f"SELECT {', '.join(f'{c}::DOUBLE AS {c}' for c in USAGE_COLUMNS)} "
                f"FROM read_csv('{path}', header = true)", f"the usage sample {sample}")
    return (f"SELECT {', '.join(f'NULL::DOUBLE AS {c}' for c in USAGE_COLUMNS)} WHERE false",
            "none (no task_usage and no usage sample)")


def build_trace_statistics(con: duckdb.DuckDBPyConnection, settings: SelectionSettings,
                           usage_sample: str | None = None) -> int:
    """Replace ``trace_statistics`` rows of the configured trace (needs its staging views,
    task_lifecycle, jobs and tasks)."""
    source, label = usage_source(con, settings.trace, usage_sample)
    return runner.build_table(con, "trace_statistics", settings, usage_source=source, usage_label=label)


def traces_with_statistics(con: duckdb.DuckDBPyConnection) -> list[str]:
    if not storage.table_exists(con, "trace_statistics"):
        return []
    return [t for (t,) in con.execute("SELECT DISTINCT trace FROM trace_statistics ORDER BY 1").fetchall()]


def _values(df: pd.DataFrame, trace: str, statistic: str) -> pd.DataFrame:
    return df[(df.trace == trace) & (df.statistic == statistic)]


def compare(con: duckdb.DuckDBPyConnection, a: str, b: str) -> pd.DataFrame:
    """One row per statistic: sizes, medians (or shares), distance, KS 5 % critical value,
    within target."""
    df = con.execute("SELECT trace, statistic, kind, value, category FROM trace_statistics WHERE trace IN (?, ?)",
                     [a, b]).df()
    rows = []
    order = list(dict.fromkeys(df.statistic))
    for st in order:
        va, vb = _values(df, a, st), _values(df, b, st)
        kind = (va if len(va) else vb).kind.iloc[0]
        row = {"statistic": st, "kind": kind, f"n {a}": len(va), f"n {b}": len(vb)}
        if len(va) == 0 or len(vb) == 0:
            row |= {"distance": math.nan, "measure": "KS" if kind == "numeric" else "TV", "critical_95": math.nan,
                    f"{a}": "", f"{b}": "", "within_target": None}
            rows.append(row)
            continue
        if kind == "numeric":
            x, y = va.value.to_numpy(float), vb.value.to_numpy(float)
            d = float(stats.ks_2samp(x, y).statistic)
            crit = KS_C95 * math.sqrt((len(x) + len(y)) / (len(x) * len(y)))
            row |= {f"{a}": _quantiles(x), f"{b}": _quantiles(y), "measure": "KS", "distance": d,
                    "critical_95": crit}
        else:
            pa, pb = va.category.value_counts(normalize=True), vb.category.value_counts(normalize=True)
            cats = sorted(set(pa.index) | set(pb.index))
            d = 0.5 * float(sum(abs(pa.get(c, 0.0) - pb.get(c, 0.0)) for c in cats))
            row |= {f"{a}": _shares(pa), f"{b}": _shares(pb), "measure": "TV", "distance": d,
                    "critical_95": math.nan}
        row["within_target"] = bool(d < TARGET)
        rows.append(row)
    rows.extend(reexecution_persistence(con, a, b))
    cols = ["statistic", "measure", "distance", "critical_95", "within_target", f"n {a}", f"n {b}", a, b]
    return pd.DataFrame(rows)[cols]


# a trace's re-executions when it has some, else its generator's model (stragglers.prediction.copies.reexecution)
_PERSISTENCE_SOURCES = ("the trace's re-executions", "generator's model (every finished task re-run)")
#: the statistics of reexecution_summary held against the other trace (row name: reexecution_<statistic>)
PERSISTENCE_STATISTICS = ("corr", "p_second_given_first")


def _persistence(con: duckdb.DuckDBPyConnection, trace: str) -> tuple[str, pd.Series] | None:
    """(source, row) of a trace's persistence numbers: its own re-executions when it has some, else
    its generator's model; None when it has neither."""
    cols = ", ".join(f"{c}, {c}_lo, {c}_hi" for c in PERSISTENCE_STATISTICS)
    rows = con.execute(f"SELECT source, n_pairs, {cols} FROM reexecution_summary WHERE trace = ? AND n_pairs > 0",
                       [trace]).df().set_index("source")
    src = next((s for s in _PERSISTENCE_SOURCES if s in rows.index), None)
    return None if src is None else (src, rows.loc[src])


def reexecution_persistence(con: duckdb.DuckDBPyConnection, a: str, b: str) -> list[dict]:
    """The re-execution persistence rows of ``compare`` (module doc); none when a trace lacks them."""
    if not storage.table_exists(con, "reexecution_summary"):
        return []
    found = [_persistence(con, t) for t in (a, b)]
    if None in found:
        return []
    (_, ra), (_, rb) = found
    out = []
    for st in PERSISTENCE_STATISTICS:
        (va, la, ha), (vb, lb, hb) = ([float(r[c]) for c in (st, f"{st}_lo", f"{st}_hi")] for r in (ra, rb))
        out.append({"statistic": f"reexecution_{st}", "kind": "numeric",
                    "measure": f"{st} difference (within: in b's 95% interval)",
                    "distance": abs(va - vb), "critical_95": math.nan, "within_target": bool(lb <= va <= hb),
                    f"n {a}": int(ra["n_pairs"]), f"n {b}": int(rb["n_pairs"]),
                    a: f"{va:.2f} [{la:.2f}, {ha:.2f}]", b: f"{vb:.2f} [{lb:.2f}, {hb:.2f}]"})
    return out


def generator_against_real(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every (generated trace, real trace) of reexecution_summary: per persistence statistic, the
    generator's model's value, the real re-executions' 95% interval, and whether it lies inside
    (the realism check fails on any outside). Empty when the warehouse lacks either kind."""
    cols = ["generated", "real", "statistic", "value", "real_lo", "real_hi", "within"]
    if not storage.table_exists(con, "reexecution_summary"):
        return pd.DataFrame(columns=cols)
    traces = [t for (t,) in con.execute("SELECT DISTINCT trace FROM reexecution_summary ORDER BY trace").fetchall()]
    found = {t: _persistence(con, t) for t in traces}
    gen = [t for t, f in found.items() if f is not None and f[0] == _PERSISTENCE_SOURCES[1]]
    real = [t for t, f in found.items() if f is not None and f[0] == _PERSISTENCE_SOURCES[0]]
    rows = []
    for g in gen:
        for r in real:
            for st in PERSISTENCE_STATISTICS:
                v, lo, hi = float(found[g][1][st]), float(found[r][1][f"{st}_lo"]), float(found[r][1][f"{st}_hi"])
                rows.append({"generated": g, "real": r, "statistic": st, "value": v, "real_lo": lo, "real_hi": hi,
                             "within": bool(lo <= v <= hi)})
    return pd.DataFrame(rows, columns=cols)


def _quantiles(x: np.ndarray) -> str:
    q = np.quantile(x, [0.1, 0.5, 0.9])
    return " / ".join(f"{v:.3g}" for v in q)


def _shares(p: pd.Series) -> str:
    return ", ".join(f"{k} {v:.0%}" for k, v in p.sort_values(ascending=False).items())


def cdf_figure(con: duckdb.DuckDBPyConnection, a: str, b: str) -> bytes:
    """Overlaid empirical CDFs (numeric, log x where every value is positive) and paired
    share bars (categories) of every statistic, as one PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = con.execute("SELECT trace, statistic, kind, value, category FROM trace_statistics WHERE trace IN (?, ?)",
                     [a, b]).df()
    order = list(dict.fromkeys(df.statistic))
    ncol = 4
    nrow = max(1, math.ceil(len(order) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4 * ncol, 2.8 * nrow))
    for ax, st in zip(np.ravel(axes), order):
        sub = df[df.statistic == st]
        if sub.kind.iloc[0] == "numeric":
            positive = (sub.value > 0).all()
            for trace, style in ((a, "-"), (b, "--")):
                x = np.sort(_values(sub, trace, st).value.to_numpy(float))
                if len(x):
                    ax.step(x, np.arange(1, len(x) + 1) / len(x), style, where="post", label=f"{trace} ({len(x)})")
            if positive:
                ax.set_xscale("log")
            ax.set_ylim(0, 1)
        else:
            cats = sorted(sub.category.dropna().unique())
            for i, trace in enumerate((a, b)):
                p = _values(sub, trace, st).category.value_counts(normalize=True)
                ax.bar(np.arange(len(cats)) + (i - 0.5) * 0.4, [p.get(c, 0) for c in cats], 0.4, label=trace)
            ax.set_xticks(range(len(cats)), cats, rotation=30, fontsize=7)
        ax.set_title(st, fontsize=9)
        ax.legend(fontsize=7)
    for ax in np.ravel(axes)[len(order):]:
        ax.axis("off")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=70)
    plt.close(fig)
    return buf.getvalue()


def png_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()
