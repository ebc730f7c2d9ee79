"""Reports: Table 3 with bootstrap intervals, the paper beside, plots, report.md."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from stragglers.reports.page.render import markdown_table as to_markdown
from stragglers.reports.page.style import band, display_name
from stragglers.prediction.copies.completion_tables import completion_table
from stragglers.prediction.methods import VARIANTS
from stragglers.prediction.replay.metrics import table3
from stragglers.reports.comparison import build_report
from stragglers.reports.sections.comparison_figures import (
    plot_completion_limited,
    plot_completion_limited_avg,
    plot_completion_unlimited,
    plot_f1_over_time,
)
from stragglers.reports.sections.paper import PAPER_TABLE3, compare_with_paper
from stragglers.reports.page.publish import write_report
from stragglers.reports.sections.tables import completion_summary, f1_over_time_table

METHOD_ORDER = tuple(VARIANTS)   # registry names in table order

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TRACES = ("synthetic", "google_2011")


def fake_job_metrics(n_jobs=30, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for trace in TRACES:
        for mi, method in enumerate(METHOD_ORDER):
            skill = 0.2 + 0.7 * mi / len(METHOD_ORDER)      # nurd best
            for j in range(n_jobs):
                pos, neg = int(rng.integers(5, 30)), int(rng.integers(50, 300))
                tp = int(rng.binomial(pos, skill))
                fp = int(rng.binomial(neg, 0.3 * (1 - skill)))
                fn, tn = pos - tp, neg - fp
                rows.append({
                    "trace": trace, "method": method, "job_id": j,
                    "tpr": tp / pos, "fpr": fp / neg, "fnr": fn / pos,
                    "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else np.nan,
                    "tp": tp, "fp": fp, "fn": fn, "tn": tn,
                    "f1_auc": (2 * tp / (2 * tp + fp + fn)) * rng.uniform(0.2, 1.0),
                    "median_lead": rng.uniform(0, 1) if tp else np.nan,
                })
    return pd.DataFrame(rows)


def fake_f1_time(seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        {"trace": t, "method": m, "job_id": j, "k": k, "f1": float(np.clip(k / 10 * rng.uniform(0.3, 1), 0, 1))}
        for t in TRACES for m in METHOD_ORDER for j in range(4) for k in range(1, 11)
    ]
    return pd.DataFrame(rows)


def fake_completion() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    tasks, preds, cps = [], [], []
    for trace in TRACES:
        for j in range(2):
            n = 150
            y = rng.lognormal(5, 0.6, n)
            grid = np.linspace(np.quantile(y, 0.04), np.quantile(y, 0.9), 8)[:-1]
            tasks += [(trace, j, i, y[i]) for i in range(n)]
            cps += [(trace, j, c) for c in grid]
            for m in METHOD_ORDER:
                for i in range(n):
                    cand = grid[grid < y[i]]
                    fl = cand[0] if len(cand) and rng.random() < 0.2 else np.nan
                    preds.append((trace, m, j, i, fl))
    return completion_table(
        pd.DataFrame(tasks, columns=["trace", "job_id", "task_id", "latency_s"]),
        pd.DataFrame(preds, columns=["trace", "method", "job_id", "task_id", "flagged_at_s"]),
        pd.DataFrame(cps, columns=["trace", "job_id", "checkpoint_s"]),
        machines=[100, 200, 300], seeds=range(2),
    )


@pytest.fixture(scope="module")
def jm():
    return fake_job_metrics()


@pytest.fixture(scope="module")
def t3(jm):
    return table3(jm, n_boot=300, seed=0)


def test_paper_table3_complete():
    assert len(PAPER_TABLE3) == 2 * 23
    # every method the paper reports (the reference rules and the survival family are not in it)
    paper = list(dict.fromkeys(PAPER_TABLE3["method"]))
    assert paper == [m for m in METHOD_ORDER if m in paper]        # ours, in the comparison's order
    assert PAPER_TABLE3[["tpr", "fpr", "fnr", "f1"]].dtypes.eq(float).all()    # numbers, not strings
    assert {m for m in METHOD_ORDER if band(m) != "reference"} - set(PAPER_TABLE3["method"]) == {
        "survival_job", "survival_history"}
    nurd = PAPER_TABLE3.set_index(["method", "paper_trace"]).loc[("nurd", "google")]
    assert tuple(nurd[["tpr", "fpr", "fnr", "f1"]]) == (0.95, 0.11, 0.09, 0.81)
    grabit = PAPER_TABLE3.set_index(["method", "paper_trace"]).loc[("grabit", "alibaba")]
    assert grabit["f1"] == 0.49


def test_table3_every_method_and_intervals(t3, jm):
    assert len(t3) == 2 * len(METHOD_ORDER)
    for trace in TRACES:
        assert list(t3[t3["trace"] == trace]["method"]) == list(METHOD_ORDER)
    assert (t3["n_jobs"] == 30).all()
    for m in ("tpr", "fpr", "fnr", "f1"):
        assert (t3[f"{m}_lo"] <= t3[m]).all() and (t3[m] <= t3[f"{m}_hi"]).all()
        assert (t3[f"{m}_lo"] < t3[f"{m}_hi"]).all()
        assert (t3[f"pooled_{m}_lo"] <= t3[f"pooled_{m}"]).all()
        assert (t3[f"pooled_{m}"] <= t3[f"pooled_{m}_hi"]).all()
    # the mean is the plain mean over jobs
    g = jm[(jm["trace"] == "synthetic") & (jm["method"] == "lof")]
    row = t3[(t3["trace"] == "synthetic") & (t3["method"] == "lof")].iloc[0]
    assert row["f1"] == pytest.approx(g["f1"].mean())
    assert row["pooled_tpr"] == pytest.approx(g["tp"].sum() / (g["tp"].sum() + g["fn"].sum()))
    # one best per trace, the method with the largest mean F1
    best = t3[t3["best_f1"]]
    assert sorted(best["trace"]) == sorted(TRACES)
    for _, r in best.iterrows():
        assert r["f1"] == t3[t3["trace"] == r["trace"]]["f1"].max()


def test_table3_without_counts_and_nan_metrics():
    jm = fake_job_metrics(n_jobs=10).drop(columns=["tp", "fp", "fn", "tn"])
    jm.loc[jm.index[:3], "fpr"] = np.nan
    t = table3(jm, n_boot=50)
    assert "pooled_f1" not in t.columns
    assert t["fpr"].notna().all()


def test_bootstrap_reproducible(jm):
    a = table3(jm, n_boot=200, seed=5)
    b = table3(jm, n_boot=200, seed=5)
    pd.testing.assert_frame_equal(a, b)
    c = table3(jm, n_boot=200, seed=6)
    assert not np.allclose(a["f1_lo"], c["f1_lo"])
    # a group's interval does not depend on which other groups are present
    only = table3(jm[jm["method"] == "nurd"], n_boot=200, seed=5)
    full = a[a["method"] == "nurd"].reset_index(drop=True)
    pd.testing.assert_series_equal(only["f1_lo"], full["f1_lo"], check_names=False)


def test_compare_with_paper(t3):
    cmp = compare_with_paper(t3)
    g = cmp[cmp["trace"] == "google_2011"].set_index("method")
    # every method of the paper has its numbers beside ours; the reference rules are not in the paper
    assert (g["paper_f1"].notna() == g.index.isin(PAPER_TABLE3["method"])).all()
    assert g.loc["nurd", "paper_f1"] == 0.81
    assert g.loc["gbtr", "paper_fpr"] == 0.01
    assert g.loc["nurd", "f1_diff"] == pytest.approx(g.loc["nurd", "f1"] - 0.81)
    s = cmp[cmp["trace"] == "synthetic"]
    assert s["paper_f1"].isna().all()
    ali = compare_with_paper(t3.assign(trace=t3["trace"].replace({"synthetic": "alibaba_2017"})))
    a = ali[ali["trace"] == "alibaba_2017"].set_index("method")
    assert a.loc["nurd", "paper_f1"] == 0.59


def test_f1_over_time_table():
    df = fake_f1_time()
    t = f1_over_time_table(df)
    assert len(t) == 2 * len(METHOD_ORDER) * 10
    assert set(t["k"]) == set(range(1, 11))
    r = t[(t["trace"] == "synthetic") & (t["method"] == "knn") & (t["k"] == 3)].iloc[0]
    sel = df[(df["trace"] == "synthetic") & (df["method"] == "knn") & (df["k"] == 3)]
    assert r["f1"] == pytest.approx(sel["f1"].mean())
    assert r["n_jobs"] == 4


def _is_png(p):
    return p.exists() and p.stat().st_size > 1000 and p.read_bytes()[:8] == PNG_MAGIC


def test_plots_are_png(tmp_path):
    comp = fake_completion()
    paths = [
        plot_f1_over_time(f1_over_time_table(fake_f1_time()), tmp_path / "f1.png"),
        plot_completion_unlimited(comp, tmp_path / "cu.png"),
        plot_completion_limited(comp, tmp_path / "cl.png"),
        plot_completion_limited_avg(comp, tmp_path / "a" / "cla.png"),
    ]
    for p in paths:
        assert _is_png(p), p


def test_completion_summary():
    comp = fake_completion()
    s = completion_summary(comp)
    assert len(s) == 2 * len(METHOD_ORDER)
    lim = comp[(comp["algorithm"] == "limited") & (comp["trace"] == "synthetic") & (comp["method"] == "cof")]
    row = s[(s["trace"] == "synthetic") & (s["method"] == "cof")].iloc[0]
    assert row["limited_avg"] == pytest.approx(lim["reduction_mean"].mean())
    g = s[s["trace"] == "google_2011"]
    assert (g["paper_nurd_unlimited"] == 0.258).all()
    assert s[s["trace"] == "synthetic"]["paper_nurd_unlimited"].isna().all()
    assert s["best_unlimited"].groupby(s["trace"]).any().all()


def test_to_markdown():
    md = to_markdown(pd.DataFrame({"a": [1.23456, np.nan], "b": ["x", "y"]}))
    lines = md.splitlines()
    assert lines[0].startswith("|") and "a" in lines[0] and "b" in lines[0]
    assert "1.235" in md and "nan" not in md
    assert "2.5" in to_markdown(pd.DataFrame({"v": [2.54]}), floatfmt=".1f")
    # a float column of whole counts (e.g. read back through a NULL) prints as counts; a 0/1 rate does not
    md = to_markdown(pd.DataFrame({"n": [12.0, np.nan], "rate": [1.0, 0.0]}), floatfmt=".2f")
    assert "|  12 |" in md and "1.00" in md and "12.00" not in md


def test_write_report(tmp_path, t3):
    comp = fake_completion()
    plot = plot_completion_unlimited(comp, tmp_path / "src" / "u.png")
    out = tmp_path / "report"
    md_path = write_report(out, {"table3": compare_with_paper(t3), "completion": comp},
                           {"completion_unlimited": plot})
    assert md_path == out / "report.md"
    for name in ("table3", "completion"):
        assert (out / f"{name}.csv").stat().st_size > 0
        back = pd.read_parquet(out / f"{name}.parquet")
        assert len(back) == len({"table3": t3, "completion": comp}[name])
    assert _is_png(out / "completion_unlimited.png")
    md = md_path.read_text()
    for m in METHOD_ORDER:
        assert m in md
    assert "](table3.csv)" in md and "](table3.parquet)" in md and "](completion_unlimited.png)" in md
    # rewriting replaces the whole directory, leaving no temporary siblings
    (out / "stale.txt").write_text("old")
    write_report(out, {"table3": t3}, {})
    assert not (out / "stale.txt").exists() and not (out / "completion.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report", "src"]


def test_write_report_failure_keeps_old_report(tmp_path, t3):
    out = tmp_path / "report"
    write_report(out, {"table3": t3}, {})
    with pytest.raises(Exception):
        write_report(out, {"table3": t3}, {"missing": tmp_path / "nope.png"})
    assert (out / "table3.csv").exists() and (out / "report.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_build_report_end_to_end(tmp_path, jm):
    ablation = pd.DataFrame([{"variant": v, "method": m, "f1": 0.5, "tpr": 0.6, "fpr": 0.1, "f1_auc": 0.3,
                              "settings": "{}"} for v in ("authors", "ours") for m in ("nurd", "flag_all")])
    sens = pd.DataFrame([{"method": m, "alpha": a, "quantile": q, "f1": 0.4, "f1_auc": 0.2}
                         for m, alphas in (("nurd", (0.0, 0.5)), ("wait_for_tau", (np.nan,)))
                         for a in alphas for q in (0.7, 0.9)])
    report = build_report(tmp_path / "r", {"job_metrics": jm, "f1_over_time": fake_f1_time(),
                                           "completion_times": fake_completion(), "protocol_ablation": ablation,
                                           "nurd_sensitivity": sens}, n_boot=50)
    md_path = report.path
    md = md_path.read_text()
    # the tables and plots come back to the caller (no reading files back)
    assert set(report.tables) >= {"table3", "paper_table3", "f1_over_time", "completion", "completion_summary"}
    assert {"completion_unlimited", "completion_limited_avg"} <= set(report.tables["table3"].columns)
    assert all(_is_png(p) for p in report.plots.values())
    for m in METHOD_ORDER:
        assert f"| {display_name(m)} " in md    # tables show display names, grouped by family
    d = md_path.parent
    assert "Spearman correlation" in md      # how the f1_auc ranking differs from the F1 ranking
    for name in ("f1_over_time", "completion_unlimited", "completion_limited", "completion_limited_avg",
                 "accuracy_vs_earliness", "protocol_ablation", "nurd_sensitivity"):
        assert _is_png(d / f"{name}.png"), name
        assert f"]({name}.png)" in md
    for name in ("table3", "paper_table3", "f1_over_time", "completion", "completion_summary"):
        assert (d / f"{name}.csv").exists() and (d / f"{name}.parquet").exists()
    assert "0.81" in md          # paper's NURD F1 on Google beside ours
    assert display_name("pu_en") == "PU-EN"


def test_completion_time_reads_in_words():
    from stragglers.reports.page.views import jct_words

    assert jct_words(0.09) == "shortens 9.0%"
    assert jct_words(-0.357) == "lengthens 35.7%"
    assert jct_words(0.0004) == jct_words(-0.0004) == "no change"
    assert jct_words(float("nan")) == jct_words(None) == ""
    from stragglers.reports.page.views import jct_sentence
    assert jct_sentence(0.16) == "shortens jobs by 16.0%" and jct_sentence(-0.357) == "lengthens jobs by 35.7%"


def test_the_report_is_its_list_of_sections(tmp_path, jm):
    from stragglers.reports import comparison

    def counts(c):      # a section of one's own: a table read by name, its caption
        df = c.get("job_metrics").groupby("trace", as_index=False).size()
        return comparison.part("jobs_per_trace", df, caption=("Jobs per trace", "Rows of job_metrics."))

    report = build_report(tmp_path / "r", {"job_metrics": jm}, (counts, comparison.table3, comparison.paper_table3),
                          n_boot=20)
    # the answer box's table first (answer.csv: the box's lines, which the terminal summary prints)
    assert list(report.tables) == ["answer", "jobs_per_trace", "table3", "paper_table3"] and report.plots == {}
    md = report.path.read_text()
    heads = [line for line in md.splitlines() if line.startswith(("## ", "### Table"))]
    assert heads == ["## What this run shows", "## More tables", "### Table 1. Jobs per trace",
                     "## Reproducing the paper",
                     "### Table 2. Prediction accuracy, the paper's Table 3 with its numbers beside ours",
                     "## Appendices", "### Table 3. The paper's Table 3 as published", "## Glossary"]
    # a section whose table is absent adds nothing; the default list holds every section once
    assert comparison.f1_over_time(comparison.Comparison({"job_metrics": jm}, tmp_path)) is None
    assert len(set(comparison.SECTIONS)) == len(comparison.SECTIONS) == 18
