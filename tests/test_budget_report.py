"""The operator's answer first (stragglers/reports/budgets.py): the paragraph, the matched-budget
table and the figure lead report.html, read in headless Chromium at 1280 px."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stragglers.prediction.completion_tables import SPECULATION_COLUMNS
from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.prediction.sweep import CAPPED_COLUMNS, budget_table, curve_table
from stragglers.reports.budgets import answer_paragraph, flags_equal
from stragglers.reports.comparison import build_report
from tests.test_product import FIT_PROBE, _job_metrics, _probe_in_chromium

METHODS = ("flag_all", "wait_for_tau", "spark_speculation", "spark4_speculation", "km_survival", "oracle",
           "nurd", "nurd_nc", "gbtr", "tobit", "iforest")


def sweep_outcomes(n_jobs: int = 12, seed: int = 0) -> pd.DataFrame:
    """Per job and point: the learned method 'tobit' buys more per unit of machine time than Spark."""
    rng = np.random.default_rng(seed)
    rows = []
    for trace in ("synthetic", "google_2011"):
        for j in range(n_jobs):
            for k, x in enumerate((0.002, 0.008, 0.015, 0.04, 0.2)):
                noise = 0.002 * rng.normal()
                rows += [(trace, "spark_speculation", f"q0.75-m{1 + k:g}-min0.1", j, 2 * x + noise, x, 3),
                         (trace, "tobit", f"{0.5 + k / 4:g}", j, 4 * x + noise, x, 3),
                         (trace, "nurd", f"{0.5 + k / 4:g}", j, 1.5 * x + noise, x, 3),
                         (trace, "km_survival", f"{0.1 * (k + 1):g}", j, x + noise, x, 3)]
            rows += [(trace, "oracle", "default", j, 0.3, 0.05, 2), (trace, "flag_all", "default", j, 0.3, 0.4, 9)]
    return pd.DataFrame(rows, columns=["trace", "method", "point", "job_id", "jct_reduction",
                                       "extra_machine_share", "n_flagged"])


def earlier(n_jobs: int = 12) -> dict:
    return {t: {j: tuple(range(j)) for j in range(n_jobs)} for t in ("synthetic", "google_2011")}


def budgets(out: pd.DataFrame, n_boot: int, n_jobs: int = 12) -> pd.DataFrame:
    """The budget table with the first half of the jobs (0..5) choosing, the rest scored."""
    choosing = {t: frozenset(range(n_jobs // 2)) for t in ("synthetic", "google_2011")}
    return budget_table(out, earlier(n_jobs), FREE_RULES, min_jobs=2, n_boot=n_boot, choosing=choosing,
                        learned=is_learned)


def test_learned_methods_exclude_the_rules_and_the_label_readers():
    assert is_learned("nurd") and is_learned("gbtr") and is_learned("tobit") and is_learned("survival_history")
    assert not any(is_learned(m) for m in (*FREE_RULES, "oracle", "wrangler", "spark4_speculation"))


def test_flags_equal_flag_all_only_when_every_flag_is_the_same():
    p = pd.DataFrame([("t", m, 1, i, f) for m, fs in (("flag_all", (5.0, 5.0)), ("nurd", (5.0, 5.0)),
                                                      ("gbtr", (5.0, np.nan)))
                      for i, f in enumerate(fs)], columns=["trace", "method", "job_id", "task_id", "flagged_at_s"])
    got = flags_equal(p).set_index("method")["flags_equal_flag_all"]
    assert bool(got["nurd"]) and not bool(got["gbtr"])


def test_the_paragraph_answers_at_two_percent_with_the_tuned_spark_rule():
    out = sweep_outcomes()
    b = budgets(out, n_boot=200)
    text = answer_paragraph(b, curve_table(out))
    first = text.split("\n\n")[0]
    assert first.startswith("**google_2011** (operator's protocol")
    # the first sentence after the trace: the comparison named on jobs 0..5, scored on 6..11
    assert "Named before scoring, on the 6 jobs that ended first, and scored on the other 6" in first
    assert "at 0.5% Tobit minus Spark speculation" in first
    assert "The pre-named learned method is above the pre-named free rule at every budget up to 5%." in first
    assert first.index("Named before scoring") < first.index("At 2% extra machine time, on the scored jobs, Spark's")
    assert "the pre-named learned method, Tobit" in first and "the oracle's headroom is 30.0%" in first
    t = b[(b["trace"] == "synthetic") & (b["budget"] == 0.02)].set_index("method")
    # scored jobs 6..11 all have enough earlier jobs; Spark's best within 2% is its 1.5% point
    assert t.loc["spark_speculation", "jobs_no_copy"] == 0 and t.loc["spark_speculation", "point_mode"] == "q0.75-m3-min0.1"
    assert t.loc["tobit", "named"] == "learned method" and t.loc["spark_speculation", "named"] == "free rule"
    assert t.loc["tobit", "named_diff_lo"] > 0 and t.loc["tobit", "reference"] == "spark_speculation"
    assert t.loc["tobit", "n_jobs"] == 6 and t.loc["tobit", "n_jobs_choosing"] == 6


def test_report_opens_with_the_answer_and_fits_1280_px_in_chromium(tmp_path):
    jm = _job_metrics(METHODS, n_jobs=6)
    spec = pd.DataFrame([(t, m, "unlimited", np.nan, 0.1, 0.0, -0.05, 0.02, 3.0, 6, "0,1")
                         for t in ("synthetic", "google_2011") for m in METHODS], columns=SPECULATION_COLUMNS)
    out = sweep_outcomes()
    b = budgets(out, n_boot=100)
    d = tmp_path / "reports"
    build_report(d, {"job_metrics": jm, "operator_job_metrics": jm, "speculation_times": spec, "matched_budgets": b,
                     "sweep_curve": curve_table(out)}, n_boot=50)
    md = (d / "report.md").read_text()
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads[:3] == ["## What this run shows", "## The answer: what 2% extra machine time buys (operator's protocol)",
                         "## Every method at every budget of extra machine time (operator's protocol; exploration)"]
    assert len(set(heads)) == len(heads)      # distinct section names
    assert md.split("## What this run shows")[1].strip().startswith("**google_2011**")
    answer = pd.read_csv(d / "answer.csv")
    assert list(answer["who"]) == ["Spark tuned on earlier jobs (at 2%)", "pre-named learned method (at 2%)",
                                   "headroom (its own point)"] * 2
    (tmp_path / "keep").write_text(str(d))
    probe = """<script>
window.addEventListener('load', () => {
  const p = document.querySelector('h2 + p');
  const img = document.images[0];
  const out = document.createElement('pre'); out.id = 'first';
  out.textContent = JSON.stringify({text: p ? p.textContent : '', alt: img.alt, ok: img.complete && img.naturalWidth > 0,
                                    shown: img.getBoundingClientRect().width});
  document.body.appendChild(out);
});
</script>"""
    first = _probe_in_chromium(d, tmp_path, probe, "first", "--window-size=1280,900")
    assert "Named before scoring" in first["text"] and "oracle's headroom" in first["text"]
    assert first["alt"].startswith("Figure 0.") and first["ok"] and 600 < first["shown"] <= 1280
    fit = _probe_in_chromium(d, tmp_path, FIT_PROBE, "fit", "--window-size=1280,900")
    assert fit["page"] <= fit["W"] and fit["cut"] == [], fit


def test_the_paragraph_says_when_the_budget_is_enforced_and_quotes_the_capped_headroom():
    out = sweep_outcomes()
    rows = []
    for b in (0.005, 0.01, 0.02, 0.05):
        scale = np.minimum(1.0, b / out["extra_machine_share"])      # a cap holds each point to b
        c = out.assign(cap=f"{b:g}", jct_reduction=out["jct_reduction"] * scale,
                       extra_machine_share=out["extra_machine_share"] * scale, n_copies=1.0)
        c.loc[c["method"] == "oracle", "point"] = "capped"
        rows.append(c[CAPPED_COLUMNS])
    capped = pd.concat(rows, ignore_index=True)
    choosing = {t: frozenset(range(6)) for t in ("synthetic", "google_2011")}
    b = budget_table(out, earlier(), FREE_RULES, min_jobs=2, n_boot=100, choosing=choosing, learned=is_learned,
                     capped=capped)
    first = answer_paragraph(b, curve_table(out)).split("\n\n")[0]
    assert "(the budget enforced at every decision, each copy on a lease: no job spends above it)" in first
    # the capped oracle at 2%: 0.3 x 2/5
    assert "the oracle under the same cap (the tasks that truly end last copied first, where the copy wins), the " \
           "headroom at this budget, shortens jobs by 12.0%" in first
    assert b["enforced"].all() and (b["extra_machine_share"] <= b["budget"] + 1e-12).all()


def test_the_paragraph_names_the_methods_whose_cheapest_copying_point_is_above_the_smallest_budget():
    from stragglers.reports.budgets import cheapest_sentence

    def curve(rows):
        return pd.DataFrame([("t", m, p, 5, 0.01, x) for m, p, x in rows],
                            columns=["trace", "method", "point", "n_jobs", "jct_reduction", "extra_machine_share"])

    c = curve([("km_survival", "0.9", 0.03), ("km_survival", "0.95", 0.021), ("km_survival", "0.99", 0.021),
               ("km_survival", "0.5", 0.2), ("flag_all", "default", 0.24), ("oracle", "default", 0.05),
               ("nurd", "100", 0.0), ("nurd", "20", 0.004), ("nurd", "1", 0.3),       # a point within: not named
               ("tobit", "100", 0.0), ("tobit", "50", 0.009), ("tobit", "1", 0.2)])  # copies nothing, then 0.9%
    got = cheapest_sentence(c)
    assert got.startswith("Cheapest point that copies, above the smallest budget (0.5% extra machine time): ")
    assert "(2.10%; 2 of its cuts copy exactly that: its score is at the top of its range" in got
    assert "(24.00%; one point, no score to cut)" in got and "(0.90%; its strictest cut that copies)" in got
    assert "NURD" not in got.replace("NURD-", "") and "racle" not in got
    assert cheapest_sentence(curve([("nurd", "20", 0.004)])) == ""
