"""Words and views of the report's chapter "Reproducing the paper": the earliness table, how the
ranking by F1 AUC differs from the ranking by F1, which method has the best F1, and the sentence that
says why one method can lengthen jobs under the paper's protocol and shorten them under the
operator's. Plain pandas in, text and frames out."""

from __future__ import annotations

import pandas as pd

from stragglers.prediction.methods import METHODS
from stragglers.reports.page import views
from stragglers.reports.page.style import display_name
from stragglers.reports.page.words import pct


def ranking_note(t3: pd.DataFrame) -> str:
    """One paragraph per trace: how the ranking by F1 AUC differs from the ranking by F1."""
    if "f1_auc" not in t3:
        return ""
    out = []
    for trace, g in t3.groupby("trace", sort=True):
        g = g.dropna(subset=["f1", "f1_auc"])
        if len(g) < 2:
            continue
        by_f1 = g.sort_values("f1", ascending=False, kind="mergesort")
        by_auc = g.sort_values("f1_auc", ascending=False, kind="mergesort")
        rank_f1 = {m: i + 1 for i, m in enumerate(by_f1["method"])}
        rank_auc = {m: i + 1 for i, m in enumerate(by_auc["method"])}
        rho = float(pd.Series(rank_f1).corr(pd.Series(rank_auc), method="spearman"))
        moves = sorted(rank_f1, key=lambda m: -abs(rank_f1[m] - rank_auc[m]))[:3]

        def top(df, col):
            return ", ".join(f"{display_name(m)} {v:.2f}" for m, v in zip(df["method"][:3], df[col][:3]))
        out.append(
            f"**{trace}**: by final F1 the top three are {top(by_f1, 'f1')}; by F1 AUC (F1 averaged over "
            f"normalized time) they are {top(by_auc, 'f1_auc')}. Spearman correlation of the two rankings over "
            f"{len(g)} methods: {rho:.2f}. Largest moves (rank by F1 -> rank by F1 AUC): "
            + "; ".join(f"{display_name(m)} {rank_f1[m]} -> {rank_auc[m]}" for m in moves) + ".")
    return "\n\n".join(out)


def earliness_view(t3: pd.DataFrame) -> pd.DataFrame:
    """Accuracy beside earliness and completion time, per method (the columns Table 3 adds)."""
    cols = {"f1": "F1 (0-1)", "f1_auc": "F1 AUC (0-1)", "median_lead": "median lead (share of tau)",
            "completion_unlimited": "jobs' completion time, Alg. 2",
            "completion_limited_avg": "jobs' completion time, Alg. 3"}
    out = t3[["trace", "method"]].copy()
    for c, label in cols.items():
        if c in t3:
            out[label] = (t3[c].map(views.jct_words) if c.startswith("completion")
                          else t3[c].map(views.lead_words) if c == "median_lead"
                          else t3[c].map(lambda v: "" if pd.isna(v) else f"{v:.2f}"))
    return views.banded(out)


def _reads_labels(method: str) -> bool:
    return method in METHODS and METHODS[method].tags.reads_labels


def best_f1_sentence(t3: pd.DataFrame) -> str:
    """Per trace: the highest mean F1, and the highest among the methods that do not read the labels."""
    out = []
    for trace, g in t3.dropna(subset=["f1"]).groupby("trace", sort=True):
        best = g.loc[g["f1"].idxmax()]
        s = f"Highest mean F1 on {trace}: {display_name(best.method)} ({best.f1:.2f})"
        fair = g[~g["method"].map(_reads_labels)]
        if _reads_labels(best.method) and len(fair):
            b = fair.loc[fair["f1"].idxmax()]
            s += f"; among the methods that do not read the labels, {display_name(b.method)} ({b.f1:.2f})"
        out.append(s + ".")
    return " ".join(out)


def protocols_sentence(t3: pd.DataFrame, operator_table: pd.DataFrame | None) -> str:
    """Where a method lengthens jobs under the paper's protocol and shortens them under the operator's:
    the first such method's numbers, the others by name, and why."""
    if operator_table is None or "completion_unlimited" not in t3:
        return ""
    both = t3[["trace", "method", "completion_unlimited"]].merge(
        operator_table[["trace", "method", "jct_reduction"]], on=["trace", "method"])
    flips = both[(both["completion_unlimited"] < -5e-4) & (both["jct_reduction"] > 5e-4)]
    if flips.empty:
        return ""
    first = flips.sort_values("method", key=lambda s: s != "oracle").iloc[0]
    name = "the oracle" if first.method == "oracle" else display_name(first.method)
    others = [display_name(m) for m in flips["method"] if m != first.method]
    return (f"The same method can lengthen jobs under this protocol and shorten them under the operator's: on "
            f"{first.trace} {name} lengthens them by {pct(-first.completion_unlimited)} here ({{table:headline}}) and "
            f"shortens them by {pct(first.jct_reduction)} in {{table:operator_view}}"
            + (f"; so do {', '.join(others)}" if others else "")
            + ". The paper's protocol kills a flagged task and restarts it: the work done is lost and the restart can "
              "be slow again. The operator's starts a copy and keeps whichever attempt finishes first, so a copy "
              "never makes a job longer.")
