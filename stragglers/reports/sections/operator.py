"""The operator's view (docs/EVALUATION.md "Two protocols"): what the report leads with.

Per (trace, method) under the operator's protocol (threshold tau_hat(t), decisions on the online
clock until the job ends: stragglers/prediction/replay/clock.py; a speculative copy per flag): the reduction in job completion time (JCT) with a machine
always free (mean over jobs and seeds) and averaged over the limited-machine settings, the p90 over
jobs of the JCT change (the tail; never above 0 with copies), the extra machine time as a share of
the job's original machine time, F1 and F1 AUC. Plain pandas in, a table, a figure and one
paragraph out.

- ``pareto``: not dominated by another row of the trace (another method reduces JCT at least as
  much for at most as much extra machine time, one of the two strictly).
- ``beats_free_rules``: a method (not a rule, not the oracle) that lies above the free rules'
  Pareto front: no free rule gives at least its JCT reduction for at most its extra machine time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.prediction.replay.clock import clock_caption
from stragglers.prediction.methods import FREE_RULES, SURVIVAL_FAMILY
from stragglers.reports.page import figures
from stragglers.reports.page.style import band, display_name, style_for
from stragglers.reports.page.views import jct_sentence, jct_words

COLUMNS = ["trace", "method", "band", "n_jobs", "jct_reduction", "jct_reduction_limited_avg", "jct_change_p90",
           "extra_machine_share", "copies_per_job", "f1", "f1_lo", "f1_hi", "f1_auc", "median_lead", "pareto",
           "beats_free_rules"]
ORACLE = "oracle"


def _dominated(x: float, y: float, xs: np.ndarray, ys: np.ndarray) -> bool:
    """(x extra, y reduction) is dominated by a point of (xs, ys)."""
    return bool(np.any((xs <= x) & (ys >= y) & ((xs < x) | (ys > y))))


def operator_table(t3: pd.DataFrame, speculation: pd.DataFrame) -> pd.DataFrame:
    """``t3``: Table 3 of the operator's job metrics (stragglers.reports.comparison.table3);
    ``speculation``: stragglers.prediction.copies.completion_tables.speculation_table of its predictions."""
    unl = speculation[speculation["algorithm"] == "unlimited"][
        ["trace", "method", "reduction_mean", "jct_change_p90", "extra_machine_share", "n_copies_per_job"]]
    lim = (speculation[speculation["algorithm"] == "limited"].groupby(["trace", "method"])["reduction_mean"]
           .mean().rename("jct_reduction_limited_avg").reset_index())
    out = (t3[["trace", "method", "n_jobs", "f1", "f1_lo", "f1_hi", "f1_auc", "median_lead"]]
           .merge(unl, on=["trace", "method"], how="left").merge(lim, on=["trace", "method"], how="left")
           .rename(columns={"reduction_mean": "jct_reduction", "n_copies_per_job": "copies_per_job"}))
    out["band"] = out["method"].map(lambda m: "oracle" if m == ORACLE else band(m))
    out["pareto"] = False
    out["beats_free_rules"] = pd.array([pd.NA] * len(out), dtype="boolean")
    for trace, g in out.groupby("trace"):
        ok = g.dropna(subset=["jct_reduction", "extra_machine_share"])
        xs, ys = ok["extra_machine_share"].to_numpy(), ok["jct_reduction"].to_numpy()
        rules = ok[ok["method"].isin(FREE_RULES)]
        rx, ry = rules["extra_machine_share"].to_numpy(), rules["jct_reduction"].to_numpy()
        for i, r in ok.iterrows():
            out.at[i, "pareto"] = not _dominated(r.extra_machine_share, r.jct_reduction, xs, ys)
            if r.band not in ("reference", "oracle"):
                # above the free rules' front: no free rule gets as much for as little
                out.at[i, "beats_free_rules"] = not bool(np.any((rx <= r.extra_machine_share)
                                                                & (ry >= r.jct_reduction)))
    order = {"oracle": 0, "reference": 1, "baseline": 2, "nurd": 3}
    out = out.assign(_b=out["band"].map(order)).sort_values(["trace", "_b", "jct_reduction"],
                                                            ascending=[True, True, False], kind="mergesort")
    return out.drop(columns="_b").reset_index(drop=True)[COLUMNS]


def operator_view(table: pd.DataFrame) -> pd.DataFrame:
    """The table formatted for a reader (percentages, the oracle and the rules marked)."""
    def pct(v):
        return "" if pd.isna(v) else f"{v * 100:.1f}"

    def num(v):
        return "" if pd.isna(v) else f"{v:.2f}"

    rows = []
    for r in table.itertuples(index=False):
        name = display_name(r.method) + (" (free rule)" if r.method in FREE_RULES else "")
        rows.append({"trace": r.trace, "method": name, "jobs": r.n_jobs,
                     "jobs' completion time, unlimited machines": jct_words(r.jct_reduction),
                     "jobs' completion time, limited (avg)": jct_words(r.jct_reduction_limited_avg),
                     "jobs' completion time, p90 over jobs": jct_words(-r.jct_change_p90),
                     "extra machine time (%)": pct(r.extra_machine_share),
                     "copies / job": "" if pd.isna(r.copies_per_job) else f"{r.copies_per_job:.1f}",
                     "F1": num(r.f1), "F1 AUC": num(r.f1_auc),
                     "Pareto": "yes" if r.pareto else "",
                     "beats free rules": "" if pd.isna(r.beats_free_rules) else ("yes" if r.beats_free_rules
                                                                                  else "no")})
    return pd.DataFrame(rows)


def plot_pareto(table: pd.DataFrame, path, cost_curve: pd.DataFrame | None = None) -> Path:
    return figures._save(*pareto_figure(table, cost_curve), path)


def pareto_figure(table: pd.DataFrame, cost_curve: pd.DataFrame | None = None):
    """x = extra machine time, y = JCT reduction, one point per method, one panel per trace (at the
    page's width); free rules drawn as open squares, the oracle as a star, the Pareto front as a step
    line; with ``cost_curve`` (the operator's cost_curve table) each survival method's outcome over the
    price of machine time as a thin line through its point. Points on one another share one label."""
    plt = figures._plt()
    traces = sorted(table["trace"].unique())
    fig, axes = plt.subplots(1, max(1, len(traces)), figsize=(figures.FIGURE_IN, 6.0), squeeze=False,
                             layout="constrained")
    for ax, trace in zip(axes[0], traces):
        g = table[(table["trace"] == trace)].dropna(subset=["jct_reduction", "extra_machine_share"])
        for r in g.itertuples(index=False):
            st = style_for(r.method)
            x, y = r.extra_machine_share * 100, r.jct_reduction * 100
            if r.method == ORACLE:
                ax.scatter(x, y, marker="*", s=160, color="gold", edgecolor="black", zorder=4)
            elif r.method in FREE_RULES:
                ax.scatter(x, y, marker="s", s=60, facecolor="none", edgecolor=st.color, linewidth=1.5, zorder=3)
            else:
                ax.scatter(x, y, color=st.color, marker=st.marker, s=50 if st.highlight else 30, zorder=3)
        for method, c in cost_curves(cost_curve, trace):
            ax.plot(c["extra_machine_share"] * 100, c["jct_reduction"] * 100, color=style_for(method).color,
                    linewidth=0.8, marker=".", markersize=4, zorder=2,
                    label=f"{display_name(method)}, lambda {c['cost_lambda'].min():g}-{c['cost_lambda'].max():g}")
        front = g[g["pareto"]].sort_values("extra_machine_share")
        if len(front):
            ax.step(front["extra_machine_share"] * 100, front["jct_reduction"] * 100, where="post",
                    color="0.4", linewidth=1.0, linestyle="--", zorder=2, label="Pareto front")
        ax.set_xlabel("extra machine time (% of the job's original machine time)")
        ax.set_ylabel("jobs' completion time shortened by (%)")
        ax.set_title(trace)
        ax.grid(alpha=0.3)
        ax.margins(0.08)       # room for the labels of the points on the edges
        ax.autoscale_view()
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, frameon=False)
    figures.freeze_layout(fig)
    for ax, trace in zip(axes[0], traces):
        g = table[(table["trace"] == trace)].dropna(subset=["jct_reduction", "extra_machine_share"])
        figures.label_points(ax, g["extra_machine_share"] * 100, g["jct_reduction"] * 100,
                             [display_name(m) for m in g["method"]])
    return plt, fig


def cost_curves(cost_curve: pd.DataFrame | None, trace: str) -> list[tuple[str, pd.DataFrame]]:
    """(method, its rows by lambda) of the survival methods' cost curves drawn for ``trace``."""
    if cost_curve is None or not len(cost_curve):
        return []
    c = cost_curve[cost_curve["trace"] == trace]
    return [(m, g.sort_values("cost_lambda")) for m, g in c.groupby("method", sort=True)]


def pareto_notes(table: pd.DataFrame, cost_curve: pd.DataFrame | None = None) -> str:
    """What the figure draws besides the points, and which points share a label, in words."""
    out = []
    for trace, g in table.dropna(subset=["jct_reduction", "extra_machine_share"]).groupby("trace", sort=True):
        drawn = cost_curves(cost_curve, trace)
        if drawn:
            out.append(f"On {trace}, thin lines: " + ", ".join(display_name(m) for m, _ in drawn)
                       + "'s outcome as the price of machine time (lambda) goes from "
                       f"{drawn[0][1]['cost_lambda'].min():g} to {drawn[0][1]['cost_lambda'].max():g}, its threshold "
                       "chosen on earlier jobs.")
        key = (g["extra_machine_share"] * 1000).round().astype(int).astype(str) + "/" + \
              (g["jct_reduction"] * 1000).round().astype(int).astype(str)
        same = [sorted(display_name(m) for m in grp["method"]) for _, grp in g.groupby(key) if len(grp) > 1]
        for names in same:
            out.append(f"On {trace}, {', '.join(names)} land on one point (within 0.1 points on both axes).")
    return " ".join(out)


def operator_paragraph(table: pd.DataFrame) -> str:
    """One paragraph per trace: the oracle's headroom, the best free rule, which methods beat the
    free rules on both axes; every number from ``table``."""
    out = []
    for trace, g in table.groupby("trace", sort=True):
        g = g.dropna(subset=["jct_reduction"])
        if g.empty:
            continue
        n_jobs = int(g["n_jobs"].max())
        s = [f"Operator's view on `{trace}` ({n_jobs} jobs; {clock_caption()}; a flag launches a "
             f"speculative copy):"]
        orc = g[g["method"] == ORACLE]
        if len(orc):
            o = orc.iloc[0]
            s.append(f"the oracle, which copies every true straggler at the first checkpoint, "
                     f"{jct_sentence(o.jct_reduction)} for {o.extra_machine_share * 100:.1f}% "
                     f"extra machine time (the headroom).")
        rules = g[g["method"].isin(FREE_RULES)]
        if len(rules):
            b = rules.loc[rules["jct_reduction"].idxmax()]
            s.append(f"The best free rule, {display_name(b.method)}, {jct_sentence(b.jct_reduction)} for "
                     f"{b.extra_machine_share * 100:.1f}% extra machine time (F1 {b.f1:.2f}).")
        models = g[g["beats_free_rules"].notna()]
        winners = models[models["beats_free_rules"].astype(bool)].sort_values("jct_reduction", ascending=False)
        if not len(models):
            s.append("No model was evaluated under this protocol.")
        elif len(winners):
            s.append("Above the free rules' Pareto front (it shortens jobs more than any free rule for no more "
                     "extra machine time): " + "; ".join(
                         f"{display_name(r.method)} ({jct_words(r.jct_reduction)} for {r.extra_machine_share * 100:.1f}%)"
                         for r in winners.itertuples(index=False)) + ".")
        else:
            s.append(f"None of the {len(models)} models evaluated beats the free rules on both axes: for each, "
                     "a free rule shortens jobs at least as much for no more extra machine time.")
        nurd = g[g["method"] == "nurd"]
        if len(nurd) and not (len(winners) and "nurd" in set(winners["method"])):
            n = nurd.iloc[0]
            s.append(f"NURD {jct_sentence(n.jct_reduction)} for {n.extra_machine_share * 100:.1f}% extra machine "
                     f"time (F1 {n.f1:.2f}).")
        out.append(" ".join(s))
    return "\n\n".join(out)


def operator_headline_text(table: pd.DataFrame) -> list[str]:
    """Terminal lines (README command 1): the oracle, the free rules and NURD per trace."""
    lines = []
    for trace, g in table.groupby("trace", sort=True):
        lines.append(f"  {trace}:")
        lines.append(f"    {'method':<26}{'jobs':>16}{'+machine':>9}{'p90 jobs':>16}{'F1':>6}")
        keep = g[g["method"].isin([ORACLE, *FREE_RULES, "nurd"]) | g["beats_free_rules"].fillna(False).astype(bool)]
        for r in keep.itertuples(index=False):
            def pct(v):
                return "-" if pd.isna(v) else f"{v * 100:.1f}%"
            lines.append(f"    {display_name(r.method)[:25]:<26}{jct_words(r.jct_reduction) or '-':>16}"
                         f"{pct(r.extra_machine_share):>9}{jct_words(-r.jct_change_p90) or '-':>16}"
                         f"{'-' if pd.isna(r.f1) else f'{r.f1:.2f}':>6}")
    return lines


# ----------------------------------------------------------------------------- the survival family's verdict
#: The free rules the issue's goal names for JCT at no more machine time: Spark's two default sets.
SPARK_RULES = ("spark_speculation", "spark4_speculation")
VERDICT_COLUMNS = ["trace", "method", "rule", "n_jobs", "jct_diff", "jct_diff_lo", "jct_diff_hi", "machine_diff",
                   "machine_diff_lo", "machine_diff_hi", "f1_auc_diff", "f1_auc_diff_lo", "f1_auc_diff_hi"]


def family_verdict(job_metrics: pd.DataFrame, spec_jobs: pd.DataFrame, methods=SURVIVAL_FAMILY,
                   n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per (trace, method of ``methods``, free rule): the method minus the rule in JCT reduction,
    extra machine time (shares, speculative copies, unlimited machines) and F1 AUC, mean over the
    jobs both were scored on, with a 95% paired percentile bootstrap interval over jobs
    (``n_boot`` resamples, generator seeded by ``seed``, the same resamples for the three)."""
    per_job = spec_jobs.merge(job_metrics[["trace", "method", "job_id", "f1_auc"]].astype({"job_id": str}),
                              on=["trace", "method", "job_id"], how="inner") if len(spec_jobs) else spec_jobs
    rows = []
    for trace, g in per_job.groupby("trace", sort=True):
        wide = g.pivot_table(index="job_id", columns="method",
                             values=["jct_reduction", "extra_machine_share", "f1_auc"])
        for m in methods:
            for rule in FREE_RULES:
                cols = [(v, x) for v in ("jct_reduction", "extra_machine_share", "f1_auc") for x in (m, rule)]
                if not all(c in wide.columns for c in cols):
                    continue
                w = wide[cols].dropna()
                if w.empty:
                    continue
                d = np.c_[w[("jct_reduction", m)] - w[("jct_reduction", rule)],
                          w[("extra_machine_share", m)] - w[("extra_machine_share", rule)],
                          w[("f1_auc", m)] - w[("f1_auc", rule)]]
                rng = np.random.default_rng([seed, len(d)])
                boot = d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(axis=1)   # (n_boot, 3)
                lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
                mean = d.mean(axis=0)
                rows.append((trace, m, rule, len(d), mean[0], lo[0], hi[0], mean[1], lo[1], hi[1],
                             mean[2], lo[2], hi[2]))
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def family_sentences(verdict: pd.DataFrame, table: pd.DataFrame) -> str:
    """One sentence per trace: does a survival method beat Spark's rules on JCT reduction at no more
    extra machine time and every free rule on F1 AUC, with 95% intervals over jobs excluding a tie;
    and how much of the oracle's headroom it takes. Every number from ``verdict`` and ``table``."""
    def pp(v):
        return f"{v * 100:+.1f} pp"

    out = []
    for trace, g in verdict.groupby("trace", sort=True):
        t = table[table["trace"] == trace]
        orc = t[t["method"] == ORACLE]["jct_reduction"]
        parts = []
        for m, mg in g.groupby("method", sort=False):
            spark = mg[mg["rule"].isin(SPARK_RULES)]
            jct_ok = len(spark) == len(SPARK_RULES) and bool(((spark["jct_diff_lo"] > 0)
                                                               & (spark["machine_diff"] <= 0)).all())
            auc_ok = bool((mg["f1_auc_diff_lo"] > 0).all())
            row = t[t["method"] == m]
            head = ""
            if len(row) and len(orc) and orc.iloc[0] > 0:
                head = (f"; it takes {row['jct_reduction'].iloc[0] / orc.iloc[0] * 100:.0f}% of the oracle's "
                        f"headroom ({row['jct_reduction'].iloc[0] * 100:.1f}% of {orc.iloc[0] * 100:.1f}%)")
            sp = "; ".join(f"vs {display_name(r.rule)}: JCT {pp(r.jct_diff)} [{pp(r.jct_diff_lo)}, {pp(r.jct_diff_hi)}], "
                           f"machine {pp(r.machine_diff)} [{pp(r.machine_diff_lo)}, {pp(r.machine_diff_hi)}]"
                           for r in spark.itertuples(index=False))
            worst = mg.loc[mg["f1_auc_diff_lo"].idxmin()]
            parts.append(
                f"{display_name(m)} {'beats' if jct_ok else 'does not beat'} Spark's rules on JCT reduction at no more "
                f"extra machine time ({sp}) and {'beats' if auc_ok else 'does not beat'} every free rule on "
                f"F1 AUC (closest: {display_name(worst.rule)}, {worst.f1_auc_diff:+.3f} "
                f"[{worst.f1_auc_diff_lo:+.3f}, {worst.f1_auc_diff_hi:+.3f}]){head}")
        out.append(f"Survival family on `{trace}` (differences with 95% intervals over {int(g['n_jobs'].max())} "
                   f"jobs): " + ". ".join(parts) + ".")
    return "\n\n".join(out)
