"""What a user sees: method styles, the generated story, the HTML report in a real browser,
the end-of-run summary from a real DuckDB file, the scripts' --help, honest fetch logs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from stragglers.prediction.methods import VARIANTS
from stragglers.prediction.replay.metrics import table3
from stragglers.reports.comparison import build_report
from stragglers.reports.sections.paper import compare_with_paper
from stragglers.reports.sections.story import headline, terminal_summary, what_this_run_shows
from stragglers.reports.page.style import FAMILIES, display_name, family_of, style_for
from tests.browser import FIT_PROBE, PROBE, READ_PROBE
from tests.browser import probe as _probe_in_chromium
from tests.test_reports import fake_completion

ROOT = Path(__file__).resolve().parents[1]
RULES = FAMILIES["reference rules"]
ALL_METHODS = tuple(dict.fromkeys((*VARIANTS, *RULES)))   # 26 methods: the legibility case


def _job_metrics(methods, traces=("synthetic", "google_2011"), n_jobs=12, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for trace in traces:
        for mi, method in enumerate(methods):
            skill = 0.2 + 0.7 * mi / len(methods)
            for j in range(n_jobs):
                pos, neg = int(rng.integers(5, 30)), int(rng.integers(50, 300))
                tp = int(rng.binomial(pos, skill))
                fp = int(rng.binomial(neg, 0.3 * (1 - skill)))
                fn, tn = pos - tp, neg - fp
                rows.append({"trace": trace, "method": method, "job_id": j, "tpr": tp / pos, "fpr": fp / neg,
                             "fnr": fn / pos, "f1": 2 * tp / (2 * tp + fp + fn), "tp": tp, "fp": fp,
                             "fn": fn, "tn": tn, "f1_auc": skill / 2,
                             "median_lead": skill / 3 if tp else np.nan})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# style
# ---------------------------------------------------------------------------

def test_every_method_has_its_own_look_and_family():
    looks = {(s.color, str(s.linestyle), s.marker) for s in map(style_for, ALL_METHODS)}
    assert len(looks) == len(ALL_METHODS)                  # no two methods drawn alike
    assert {family_of(m) for m in ALL_METHODS} == set(FAMILIES)
    # NURD and the reference rules stand out: thicker and on top of every other line
    plain = max(style_for(m).linewidth for m in ALL_METHODS if m not in ("nurd", *RULES))
    for m in ("nurd", *RULES):
        assert style_for(m).highlight and style_for(m).linewidth > plain
    assert style_for("nurd").color == "#000000"
    # a family shares its colours; a method not in the registry still gets a style
    assert style_for("pu_en").color != style_for("tobit").color
    assert style_for("some_new_method").family == "other"


# ---------------------------------------------------------------------------
# the generated paragraph, on numbers worked by hand
# ---------------------------------------------------------------------------

def _t3_by_hand() -> pd.DataFrame:
    rows = [  # trace, method, n_jobs, f1, lo, hi
        ("google_2011", "nurd", 40, 0.60, 0.55, 0.65),
        ("google_2011", "lof", 40, 0.40, 0.35, 0.45),
        ("google_2011", "tobit", 40, 0.58, 0.50, 0.66),
        ("google_2011", "gbtr", 40, 0.70, 0.60, 0.80),       # NURD family: never "the best baseline"
        ("google_2011", "wait_for_tau", 40, 0.64, 0.62, 0.66),
        ("google_2011", "flag_all", 40, 0.20, 0.18, 0.22),
    ]
    t = pd.DataFrame(rows, columns=["trace", "method", "n_jobs", "f1", "f1_lo", "f1_hi"])
    for m in ("tpr", "fpr", "fnr"):
        t[m] = 0.5
    return compare_with_paper(t)


def test_story_states_this_runs_numbers():
    early = pd.DataFrame({"trace": ["google_2011"] * 2, "method": ["nurd", "wait_for_tau"], "f1_auc": [0.41, 0.07]})
    comp = pd.DataFrame({"trace": ["google_2011"] * 3, "method": ["nurd", "tobit", "wait_for_tau"],
                         "unlimited": [0.123, 0.2, -0.05], "limited_avg": [0.1, 0.15, -0.04]})
    head = headline(_t3_by_hand(), early, comp)
    assert list(head["role"]) == ["NURD", "best baseline", "best free rule", "free rule"]
    assert list(head["method"]) == ["nurd", "tobit", "wait_for_tau", "flag_all"]
    assert list(head["method"][:3]) == ["nurd", "tobit", "wait_for_tau"]
    text = what_this_run_shows(head, {"google_2011": 6})
    assert "On `google_2011` (40 jobs, 6 methods evaluated)" in text
    assert "0.60 (95% CI 0.55-0.65)" in text and "the paper: 0.81" in text
    # Tobit: 0.60 - 0.58 = 0.02, intervals [0.55, 0.65] and [0.50, 0.66] overlap
    assert "Tobit, reaches 0.58 (95% CI 0.50-0.66): NURD is ahead by 0.02; the 95% intervals overlap" in text
    # wait for tau: 0.64 - 0.60 = 0.04 ahead of NURD, [0.62, 0.66] overlaps [0.55, 0.65]
    assert f"The best free rule (no model) is {display_name('wait_for_tau')}" in text
    assert "ahead of NURD by 0.04" in text
    assert "a free rule matches or beats NURD" in text
    assert "F1 AUC" in text and "0.41" in text and "0.07" in text
    assert "shortens jobs by 12.3%" in text
    # the largest reduction among the headline rows is Tobit's 20.0%
    assert "Tobit's, 20.0%" in text


def test_story_without_baselines_says_what_to_run():
    t = _t3_by_hand()
    head = headline(t[t["method"].isin(["nurd", "gbtr"])])
    text = what_this_run_shows(head)
    # no claim the run makes false: no free rule ran either, and what to run for the paper's other rivals
    assert "Only NURD's family ran here" in text and "bash scripts/baselines.sh" in text and "baseline_eval" in text
    assert "free rule" not in text and "No baseline has been evaluated" not in text


# ---------------------------------------------------------------------------
# the end-of-run summary from a real warehouse file
# ---------------------------------------------------------------------------

def test_terminal_summary_from_a_warehouse(tmp_path):
    jm = _job_metrics(["nurd", "gbtr", "lof", "hbos", "wait_for_tau"], traces=("synthetic",), n_jobs=8)
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    con.register("jm", jm)
    con.execute("CREATE TABLE job_metrics AS SELECT * FROM jm")
    con.execute("CREATE TABLE jobs AS SELECT DISTINCT trace, job_id FROM jm")
    con.close()
    text = terminal_summary(tmp_path, elapsed_s=75, ran="run abc (success)",
                            next_commands=[("UI", "dagster dev")])
    t3 = table3(jm, n_boot=0)
    nurd = t3[t3.method == "nurd"].f1.iloc[0]
    best = t3[t3.method.isin(["lof", "hbos"])].sort_values("f1").iloc[-1]
    assert "run abc (success) in 1:15 (min:s)" in text
    assert str(tmp_path / "warehouse.duckdb") in text and "8 jobs" in text and "5 methods" in text
    assert "(not written by this run)" in text                  # no report.html in this data dir
    assert f"{nurd:.2f}" in text
    assert re.search(rf"best baseline\s+{best.method.upper()}\s+{best.f1:.2f}", text)
    assert re.search(rf"best free rule\s+{re.escape(display_name('wait_for_tau'))}", text)
    assert "UI          dagster dev" in text


# ---------------------------------------------------------------------------
# the HTML report, looked at by a real browser
# ---------------------------------------------------------------------------

def _figures(report_dir: Path) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", (report_dir / "report.md").read_text())


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    jm = _job_metrics(ALL_METHODS, n_jobs=6)
    rng = np.random.default_rng(3)
    ft = pd.DataFrame([{"trace": t, "method": m, "job_id": j, "k": k, "f1": float(rng.uniform(0, k / 10))}
                       for t in ("synthetic", "google_2011") for m in ALL_METHODS for j in range(2)
                       for k in range(1, 11)])
    build_report(d / "reports", {"job_metrics": jm, "f1_over_time": ft, "completion_times": fake_completion()},
                 n_boot=50, completion_seeds=range(2))
    return d / "reports"


def test_report_html_is_self_contained(report_dir):
    page = (report_dir / "report.html").read_text()
    md = (report_dir / "report.md").read_text()
    pngs = _figures(report_dir)
    assert len(pngs) >= 4          # F1 over time and the three completion-time figures, at least
    assert page.count('src="data:image/png;base64,') == len(pngs)
    assert ".png\"" not in page                          # no image left pointing at a file
    for heading in ("What this run shows", "Headline numbers", "Table 1.", "Figure 1.", "Figure 2.", "Glossary"):
        assert heading in md
    assert "(%" in md and "(0-1)" in md and "(count)" in md     # units in the headers
    # completion time reads in words, one convention everywhere (no signed "reduction" to decode)
    assert "shortens " in md or "lengthens " in md
    assert "JCT cut" not in md and "JCT reduction," not in md and "JCT -%" not in md
    # one numbering for tables and one for figures, in the order shown; no "Figure 0", no paper's numbers
    # passed off as ours
    for kind in ("Table", "Figure"):
        numbers = [int(n) for n in re.findall(rf"^### {kind} (\d+)\. ", md, flags=re.M)]
        assert numbers == list(range(1, len(numbers) + 1)) and numbers, kind
    assert "(Figures 6-7)" not in md and "Figure 0" not in md
    # a table that lengthens jobs is titled a change, not a reduction
    assert "Reduction in job completion time" not in md and "Change in job completion time" in md


def test_report_renders_in_headless_chromium(report_dir, tmp_path):
    seen = _probe_in_chromium(report_dir, tmp_path, PROBE, "probe")
    assert len(seen["images"]) == len(_figures(report_dir)) >= 4
    assert all(i["ok"] and i["width"] > 300 for i in seen["images"]), seen["images"]
    for section in ("what-this-run-shows", "reproducing-the-paper", "appendices", "glossary",
                    "table-1-headline-numbers-under-the-paper-s-protocol",
                    "table-2-prediction-accuracy-the-paper-s-table-3-with-its-numbers-beside-ours"):
        assert section in seen["sections"], seen["sections"]
    assert any(s.startswith("table-5-change-in-job-completion-time") for s in seen["sections"]), seen["sections"]
    # the reference rules are a shaded band: their header row and their 3 rows, in every table that
    # lists them (at least Tables 1 and 2, per trace; the completion fixture has no rules)
    heads = (report_dir / "report.md").read_text().count("| ▸ reference rules")
    assert heads >= 2 * 2 and seen["bands"] == heads * (1 + len(RULES))


def test_report_fits_a_1280_px_window(report_dir, tmp_path):
    fit = _probe_in_chromium(report_dir, tmp_path, FIT_PROBE, "fit", "--window-size=1280,900")
    assert 1200 <= fit["W"] <= 1280 and fit["tables"] >= 4, fit
    # nothing runs past the right edge: the page does not scroll sideways, and a table wider than
    # the page scrolls inside its own box
    assert fit["page"] <= fit["W"] and fit["cut"] == [], fit
    assert fit["headline"] == "fits", fit            # the headline table is read whole, without scrolling


# ---------------------------------------------------------------------------
# scripts and logs
# ---------------------------------------------------------------------------

def test_run_sh_refuses_unknown_arguments():
    r = subprocess.run(["bash", str(ROOT / "scripts" / "run.sh"), "--frobnicate"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "unknown argument '--frobnicate'" in r.stderr


def test_fetch_log_says_generated_then_reused(tmp_path):
    from stragglers.traces.fetch import SyntheticScale, fetch_trace

    logs: list[list[str]] = [[], []]
    for lines in logs:
        fetch_trace("synthetic", tmp_path, scale=SyntheticScale(n_jobs=10, n_parts=2), log=lines.append)
    first, second = logs
    assert first[0].startswith("generating the embedded trace") and "embedded trace generated:" in first[-1]
    assert len(second) == 1 and second[0].startswith("embedded trace reused")
    assert not any("verified existing" in m or "downloaded 0 B" in m for m in first + second)


def test_dagster_warnings_filtered_only_by_prefix():
    env = subprocess.run(["bash", "-c", "cd '%s' && source scripts/env.sh && printf %%s \"$PYTHONWARNINGS\"" % ROOT],
                         capture_output=True, text=True, timeout=30, env={"PATH": os.environ["PATH"]}).stdout
    filters = env.split(",")
    assert len(filters) == 2 and all(f.startswith("ignore:") for f in filters)
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        for f in filters:
            action, message = f.split(":", 1)
            warnings.filterwarnings(action, message=re.escape(message))
        warnings.warn("Function `asset_materialize_command` is superseded and its usage is discouraged.")
        warnings.warn("Some other warning")
    assert [str(w.message) for w in caught] == ["Some other warning"]


def test_the_assets_silence_only_the_two_beta_notices():
    """assets/__init__.py silences Dagster's beta notices of the two APIs used on purpose, by prefix:
    importing the assets in a fresh interpreter prints no warning, another warning still shows."""
    code = ("import warnings; warnings.simplefilter('default'); import assets.prediction, assets.traces; "
            "warnings.warn('Function `observable_source_asset` is something else now')")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    warned = [line for line in r.stderr.splitlines() if "Warning:" in line]
    assert len(warned) == 1 and "something else now" in warned[0], r.stderr[-3000:]


def test_story_when_relaunching_lengthens_every_job():
    comp = pd.DataFrame({"trace": ["google_2011"] * 3, "method": ["nurd", "tobit", "wait_for_tau"],
                         "unlimited": [-0.107, -0.05, -0.038], "limited_avg": [-0.1, -0.04, -0.03]})
    text = what_this_run_shows(headline(_t3_by_hand(), None, comp))
    assert "lengthens jobs by 10.7% with unlimited machines" in text
    assert "none of NURD, the best baseline and the free rules shortens jobs" in text
    assert f"{display_name('wait_for_tau')} does least harm (lengthens 3.8%)" in text


# ---------------------------------------------------------------------------
# the whole report (the operator's sections too) read at 1280 px
# ---------------------------------------------------------------------------

def test_results_md_is_the_reports_csv_files(report_dir, tmp_path):
    """scripts/results.py writes the page from the report's CSV files: every table report.md links,
    under its heading, each cell the CSV's text (the first rows of a long one)."""
    from stragglers.reports.results import MAX_ROWS, parse_results, read_csv, report_tables

    out = tmp_path / "RESULTS.md"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "results.py"), "--reports", str(report_dir),
                    "--out", str(out)], check=True, capture_output=True)
    text = out.read_text()
    shown = parse_results(text)
    linked = report_tables(report_dir)
    assert linked and [name for name, _ in linked] == list(shown)
    for name, heading in linked:
        header, rows = read_csv(report_dir / f"{name}.csv")
        assert f"## {heading}" in text
        assert shown[name] == (header, rows[:MAX_ROWS]), name


INTERNAL_NAMES = tuple(m for m in ALL_METHODS if display_name(m) != m)


@pytest.fixture(scope="module")
def full_report(tmp_path_factory):
    """The report with every section the main job gives it: the operator's answer, view and sweep,
    the paper's tables, the completion-time figures."""
    from stragglers.prediction.copies.completion_tables import SPECULATION_COLUMNS
    from tests.test_budget_report import METHODS, tables

    jm = _job_metrics(METHODS, n_jobs=6)
    jm.loc[jm["method"] == "spark4_speculation", "median_lead"] = np.nan      # a rule that never flags early
    spec = pd.DataFrame([(t, m, alg, machines, 0.1, 0.01, -0.05, 0.02, 3.0, 6, "0,1")
                         for t in ("synthetic", "google_2011") for m in METHODS
                         for alg, machines in (("unlimited", np.nan), ("limited", 100.0), ("limited", 600.0))],
                        columns=SPECULATION_COLUMNS)
    budgets, comparisons, curve = tables()      # the operator's answer, as budgets.budget_tables builds it
    rng = np.random.default_rng(5)
    ft = pd.DataFrame([{"trace": t, "method": m, "job_id": j, "k": k, "f1": float(rng.uniform(0, k / 10))}
                       for t in ("synthetic", "google_2011") for m in METHODS for j in range(2) for k in range(1, 11)])
    d = tmp_path_factory.mktemp("full") / "reports"
    build_report(d, {"job_metrics": jm, "operator_job_metrics": jm, "speculation_times": spec,
                     "matched_budgets": budgets, "named_comparisons": comparisons,
                     "sweep_curve": curve, "f1_over_time": ft,
                     "completion_times": fake_completion()}, n_boot=50, completion_seeds=range(2))
    return d


def test_the_whole_report_reads_right_at_1280_px(full_report, tmp_path):
    seen = _probe_in_chromium(full_report, tmp_path, READ_PROBE, "read", "--window-size=1280,900")
    assert seen["page"] <= seen["W"], seen["page"]
    # no table wider than the page: wide ones are split, their detail columns in a second table
    assert [t["heading"] for t in seen["tables"] if t["wide"] or t["right"] > seen["W"] + 1] == []
    for t in seen["tables"]:
        cells = [c for row in t["rows"] for c in row]
        # display names everywhere, never the registry's
        assert not [c for c in cells if c in INTERNAL_NAMES], (t["heading"], set(cells) & set(INTERNAL_NAMES))
        # a column that says the same thing in every row is a sentence instead
        if len(t["rows"]) >= 3:
            for i, name in enumerate(t["head"]):
                values = {row[i] for row in t["rows"] if i < len(row)}
                assert len(values) > 1, (t["heading"], name, values)
    # headings in words, not a table's or a figure's file name
    assert not [h for h in seen["headings"] if re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", h.strip())], seen["headings"]
    assert "(1 rows)" not in seen["text"]


def test_a_blank_cell_says_why(full_report):
    """Spark 4's rule catches no straggler here: its median lead says so instead of a blank."""
    md = (full_report / "report.md").read_text()
    rows = [line for line in md.splitlines()
            if re.match(rf"\| google_2011 +\| {display_name('spark4_speculation')} +\|.*no straggler caught", line)]
    assert len(rows) == 2, rows          # Table 1 (its second half) and the earliness table


def test_figure_labels_neither_overlap_nor_leave_the_axes():
    """Labels of points on one another (NURD, NURD-NC and flag all; GBTR and Spark 4 at the origin)
    and of the oracle in the corner: read as the figure is drawn."""
    from matplotlib.text import Text

    from stragglers.reports.sections.comparison_figures import accuracy_vs_earliness_figure
    from stragglers.reports.sections.operator import operator_table, pareto_figure

    points = {"nurd": (0.4, 0.3), "nurd_nc": (0.4, 0.3), "flag_all": (0.401, 0.301), "km_survival": (0.41, 0.29),
              "gbtr": (0.0, 0.0), "spark4_speculation": (0.0, 0.0), "oracle": (1.0, 1.0),
              "wait_for_tau": (0.2, 0.1), "spark_speculation": (0.05, 0.02)}
    t3 = pd.DataFrame([{"trace": t, "method": m, "n_jobs": 6, "f1": a, "f1_lo": a, "f1_hi": a, "f1_auc": b,
                        "median_lead": 0.1} for t in ("synthetic", "google_2011") for m, (a, b) in points.items()])
    from stragglers.prediction.copies.completion_tables import SPECULATION_COLUMNS
    spec = pd.DataFrame([(t, m, "unlimited", np.nan, b, 0.0, -b, a / 5, 1.0, 6, "0")
                         for t in ("synthetic", "google_2011") for m, (a, b) in points.items()],
                        columns=SPECULATION_COLUMNS)
    for plt, fig in (accuracy_vs_earliness_figure(t3), pareto_figure(operator_table(t3, spec))):
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        for ax in fig.axes:
            box = ax.get_window_extent(r)
            boxes = [Text.get_window_extent(t, r) for t in ax.texts]     # the text itself, not its leader line
            named = " ".join(t.get_text() for t in ax.texts).replace("\n", " ")
            assert all(display_name(m) in named for m in points), named
            assert all(box.x0 <= b.x0 and b.x1 <= box.x1 and box.y0 <= b.y0 and b.y1 <= box.y1 for b in boxes)
            assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]
            legend = ax.get_legend()
            if legend is not None:        # outside the data
                assert legend.get_window_extent(r).y1 <= box.y0
        plt.close(fig)


def test_the_bar_figures_legend_lies_below_the_bars():
    """Figures 2 and 3: the legend (the rules' band, the paper's NURD line) covers no bar."""
    from stragglers.reports.sections.comparison_figures import _paper_nurd
    from stragglers.reports.page.figures import method_bars_figure

    sub = fake_completion()
    sub = sub[sub["algorithm"] == "unlimited"]
    plt, fig = method_bars_figure(sub, "reduction_mean", "reduction_std_over_seeds", xlabel="x", title="t",
                                  label=display_name, paper=_paper_nurd("unlimited"))
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends
    for ax in fig.axes:
        if ax.get_legend() is not None:
            assert ax.get_legend().get_window_extent(r).y1 <= ax.xaxis.get_tightbbox(r).y0
    plt.close(fig)


def test_a_wide_table_is_split_and_a_constant_column_said_once(tmp_path):
    """Without a browser: the Markdown holds two tables with the same rows, each within the page's
    width, the column that is the same in every row as one sentence; the CSV keeps every column."""
    from stragglers.reports.page.publish import PAGE_PX, _column_px
    from stragglers.reports.page.publish import write_report

    df = pd.DataFrame({"trace": ["synthetic"] * 4, "method": ["NURD", "GBTR", "HBOS", "Tobit"],
                       "jobs": ["39"] * 4, **{f"a long column name {i}": [f"0.{i}{j} [0.1{j}, 0.9{j}]" for j in range(4)]
                                               for i in range(12)}})
    md = write_report(tmp_path / "r", {"wide": df}, {}, markdown_tables={"wide": df}).read_text()
    assert "In every row, trace: synthetic; jobs: 39." in md and "| jobs" not in md and "| trace" not in md
    tables = [t for t in md.split("\n\n") if t.startswith("| method")]
    assert len(tables) >= 2 and "The same rows, continued:" in md
    for t in tables:
        head = [c.strip() for c in t.splitlines()[0].strip("|").split("|")]
        assert head[0] == "method" and len(t.splitlines()) == 2 + len(df)
        assert sum(_column_px(df, c) for c in head) <= PAGE_PX
    assert list(pd.read_csv(tmp_path / "r" / "wide.csv").columns) == list(df.columns)
    assert "(4 rows)" in md

