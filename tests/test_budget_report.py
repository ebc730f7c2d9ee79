"""The operator's answer first (stragglers/reports/sections/answer_box.py, budgets.py): the answer box, the
paragraph in words, the named comparisons and the budget table for a reader, from tables
``budgets.budget_tables`` builds on a small synthetic capped table (what the engine writes,
``capped_outcomes``); and report.html opening with the box, read in headless Chromium at 1280 px."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd

from stragglers.prediction.verdicts.budgets import SPARK_AS_RUN, budget_tables
from stragglers.prediction.copies.completion_tables import SPECULATION_COLUMNS
from stragglers.prediction.engine.caps import Budget
from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.prediction.verdicts.sweep import CAPPED_COLUMNS
from stragglers.prediction.verdicts.tuning import BUDGETS, curve_table
from stragglers.reports.compute.budget_tables import reads_labels
from stragglers.reports.sections.answer_box import answer_boxes, boxes_markdown
from stragglers.reports.sections.budgets import (
    answer_paragraph, budget_view, cheapest_sentence, comparison_view, envelope_view, flags_equal,
)
from stragglers.reports.comparison import build_report
from stragglers.reports.page.style import display_name
from stragglers.reports.page.views import jct_sentence
from tests.browser import FIT_PROBE
from tests.browser import probe as _probe_in_chromium
from tests.test_product import _job_metrics

METHODS = ("flag_all", "wait_for_tau", "spark_speculation", "spark4_speculation", "km_survival", "oracle",
           "nurd", "nurd_nc", "gbtr", "tobit", "iforest")
TRACES = ("synthetic", "google_2011")
N_JOBS = 16
#: a sweep's points by what they spend uncapped; each method cuts ``gain`` x that (Spark 2, Tobit 4,
#: NURD 1.5, the KM rule 1)
SPENDS = (0.002, 0.008, 0.015, 0.04, 0.2)
GAINS = {"spark_speculation": 2.0, "tobit": 4.0, "nurd": 1.5, "km_survival": 1.0}


def point(method: str, k: int) -> str:
    return {"spark_speculation": f"q0.75-m{1 + k:g}-min0.1", "km_survival": f"{0.1 * (k + 1):g}"}.get(
        method, f"{0.5 + k / 4:g}")


def capped_outcomes(n_jobs: int = N_JOBS, seed: int = 0, learned_gain: float = 1.0) -> pd.DataFrame:
    """What the engine would write for every point of these methods on every job: uncapped (cap
    'none'), a point that spends x cuts gain x x; under a budget b it spends min(x, b), and a point
    that flags more than b holds loses a little (its copies share the room, some killed). The oracle
    cuts 30% for 5%. ``learned_gain`` scales the learned methods' gains (0: noise only)."""
    rng = np.random.default_rng(seed)
    rows = []
    for trace in TRACES:
        for j in range(n_jobs):
            for method, gain in GAINS.items():
                g = gain * (learned_gain if is_learned(method) else 1.0)
                for k, x in enumerate(SPENDS):
                    noise = 0.002 * rng.normal()
                    rows.append((trace, method, point(method, k), "none", j, g * x + noise, x, 3.0, 3))
                    for b in BUDGETS:
                        cut = g * min(x, b) * (1 - max(0.0, x - b)) + noise
                        rows.append((trace, method, point(method, k), Budget(b).label, j, cut, min(x, b), 1.0, 3))
            for method, cut, spend in (("flag_all", 0.3, 0.4), ("oracle", 0.3, 0.05), ("nurd_nc", 0.01, 0.01),
                                       ("gbtr", 0.005, 0.004), ("iforest", 0.002, 0.02), ("wait_for_tau", 0.001, 0.3),
                                       ("spark4_speculation", 0.0, 0.0)):
                g = cut * (learned_gain if is_learned(method) else 1.0)
                p = "capped" if method == "oracle" else "default"
                rows.append((trace, method, p, "none", j, g, spend, 9.0, 9))
                for b in BUDGETS:
                    s = min(1.0, b / spend) if spend else 0.0
                    rows.append((trace, method, p, Budget(b).label, j, g * s + 0.001 * rng.normal(), spend * s, 2.0, 9))
    return pd.DataFrame(rows, columns=CAPPED_COLUMNS)


def split_inputs(n_jobs: int = N_JOBS):
    """Jobs one after another: a job is scored once 10 have ended before it started."""
    times = pd.DataFrame({"job_id": range(n_jobs), "start_us": [100 * j for j in range(n_jobs)],
                          "end_us": [100 * j + 50 for j in range(n_jobs)]})
    return {t: times for t in TRACES}, {t: {j: tuple(range(j)) for j in range(n_jobs)} for t in TRACES}


@lru_cache(maxsize=None)
def tables(n_boot: int = 200, learned_gain: float = 1.0, budgets: tuple[float, ...] = BUDGETS
           ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(matched_budgets, named_comparisons, sweep_curve) as the pipeline builds them
    (stragglers/reports/compute/budget_tables.py), from ``capped_outcomes``; built once per process (read only)."""
    capped = capped_outcomes(learned_gain=learned_gain)
    times, earlier = split_inputs()
    matched, comparisons = budget_tables(capped, times, earlier, FREE_RULES, is_learned, reads_labels, min_jobs=2,
                                         budgets=budgets, n_boot=n_boot, seed=0)
    return matched, comparisons, curve_table(capped[capped["cap"] == "none"])


def test_learned_methods_exclude_the_rules_and_the_label_readers():
    assert is_learned("nurd") and is_learned("gbtr") and is_learned("tobit") and is_learned("survival_history")
    assert not any(is_learned(m) for m in (*FREE_RULES, "oracle", "wrangler", "spark4_speculation"))
    assert reads_labels("wrangler") and reads_labels("oracle") and not reads_labels("nurd")


def test_flags_equal_flag_all_only_when_every_flag_is_the_same():
    p = pd.DataFrame([("t", m, 1, i, f) for m, fs in (("flag_all", (5.0, 5.0)), ("nurd", (5.0, 5.0)),
                                                      ("gbtr", (5.0, np.nan)))
                      for i, f in enumerate(fs)], columns=["trace", "method", "job_id", "task_id", "flagged_at_s"])
    got = flags_equal(p).set_index("method")["flags_equal_flag_all"]
    assert bool(got["nurd"]) and not bool(got["gbtr"])


def test_the_paragraph_answers_at_two_percent_with_the_tuned_spark_rule():
    budgets, comparisons, curve = tables()
    marked = budgets.merge(pd.DataFrame({"trace": list(TRACES), "method": "nurd", "flags_equal_flag_all": True}),
                           on=["trace", "method"], how="left")
    text = answer_paragraph(marked, comparisons, curve)
    first = text.split("\n\n")[0]
    assert first.startswith("**google_2011** (operator's protocol")
    # a list, one item a line: first the comparison named before it is scored: jobs 10..15 scored, each named
    # on the jobs before it
    items = [line[2:] for line in first.splitlines() if line.startswith("- ")]
    assert items[0].startswith("Named before scoring (rolling origin): a job is scored once 10 jobs ended before it "
                               "started, and each candidate is named on those jobs (10 to 15)") and "6 jobs are scored" in items[0]
    assert items[1].startswith(f"At 0.5%, named {display_name('tobit')} against {display_name('spark_speculation')}: "
                               "on the 6 scored jobs") and items[2].startswith(f"At 1%, named {display_name('tobit')}")
    assert "The pre-named learned method is above the pre-named free rule at every budget up to 5%." in items
    # then the answer at 2%: Spark tuned on earlier jobs under the budget, as Spark runs it, the best policy
    at2 = "At 2% extra machine time, on the scored jobs, Spark's speculation tuned on earlier jobs with the budget enforced"
    assert first.index("Named before scoring") < first.index(at2)
    t = budgets[(budgets["trace"] == "google_2011") & (budgets["budget"] == 0.02)].set_index(["method", "cap_mode"])
    spark = t.loc[("spark_speculation", "enforced")]
    # under the cap every point that flags at least 2% spends 2%; the one that flags 4% loses least
    assert spark["point_mode"] == "q0.75-m4-min0.1" and spark["jobs_no_copy"] == 0
    assert "(quantile 0.75, multiplier 4, minTaskRuntime 100ms most often)" in first
    # as Spark runs it: uncapped, the setting that spent within 2% on earlier jobs (1.5%), 0 jobs above
    run = t.loc[("spark_speculation", SPARK_AS_RUN)]
    assert run["point_mode"] == "q0.75-m3-min0.1" and run["extra_machine_share"] == 0.015
    assert "As Spark runs it (no cap: the setting matched within the budget on earlier jobs, changed only where " \
           "named), it shortens jobs by 3.0%" in first and "for 1.50% (0 of 6 jobs above the budget)" in first
    enforced = t.xs("enforced", level="cap_mode")
    best = enforced["jct_reduction"].idxmax()
    assert best == "tobit" and (f"The best policy tuned on earlier jobs here, {display_name('tobit')}, "
                                f"{jct_sentence(enforced.loc[best, 'jct_reduction'])}") in first
    # the headroom: per job the best of the oracle and every point, its oracle alone, the jobs it was beaten on
    r = t.iloc[0]
    assert (f"The headroom, per job the best of the oracle and of every point of every policy under the same cap at "
            f"the same checks, shortens jobs by {100 * r.headroom:.1f}% (the oracle alone {100 * r.oracle:.1f}%; "
            f"some policy beat it on {int(r.oracle_beaten_jobs)} of 6 jobs)") in first
    assert f"Flags identical to flag-all's on every job (the same copies at the same checks): {display_name('nurd')}." \
        in first
    assert f"{display_name('flag_all')} (40.00%; one point, no score to cut)" in first
    # one paragraph per trace
    assert text.split("\n\n")[1].startswith("**synthetic** (operator's protocol")


def test_the_paragraph_says_no_winner_with_the_effect_the_jobs_could_have_detected():
    budgets, comparisons, curve = tables(learned_gain=0.0, budgets=(0.02,))
    assert comparisons["learned"].isna().all() and (comparisons["verdict"] == "no winner").all()
    first = answer_paragraph(budgets, comparisons, curve).split("\n\n")[0]
    c = comparisons[(comparisons["trace"] == "google_2011") & (comparisons["budget"] == 0.02)].iloc[0]
    # the best learned method on earlier jobs, by its display name
    best = re.search(r"At 2%, named no learned method \(no winner: the best on earlier jobs, ([^)]+)\) against", first)
    assert best and best.group(1) in {display_name(m) for m in METHODS if is_learned(m)}
    assert f"an effect of {100 * c.diff_mde:+.2f} pp or more would have been seen with 80% power (no winner)" in first
    assert "The pre-named learned method is not above the pre-named free rule at every budget up to 5%" in first
    assert len(comparisons) == 2
    view = comparison_view(comparisons)
    shown = view["learned method named now"].str.extract(r"^no winner \(the best, ([^,]+), cut ")[0]
    assert shown.iloc[0] == best.group(1) and shown.isin({display_name(m) for m in METHODS if is_learned(m)}).all()
    assert view["free rule named now"].str.startswith(display_name("spark_speculation")).all()
    # the answer box: the named free rule to run, and no learned method beats it, with what the jobs could detect
    box = {b.trace: b for b in answer_boxes({"matched_budgets": budgets, "named_comparisons": comparisons})}
    lines = dict(box["google_2011"].lines)
    assert box["google_2011"].title.endswith(": run Spark's speculation, tuned")
    assert lines["What to run"].startswith(f"{display_name('spark_speculation')}: quantile 0.75, multiplier")
    assert lines["Learned methods"].startswith("no learned method beats the free rule here: none gained more on the "
                                               "earlier jobs than they could tell from chance (the best, ")
    assert "those jobs can detect" in lines["Learned methods"] or "gained nothing" in lines["Learned methods"]


def test_the_answer_box_and_the_views_name_each_pick_in_words():
    """The box runs the learned method named on earlier jobs where it is above the named free rule, with
    what it buys (its interval), what it costs and the jobs it rests on; the views say each pick in words."""
    budgets, comparisons, _ = tables()
    boxes = {b.trace: b for b in answer_boxes({"matched_budgets": budgets, "named_comparisons": comparisons})}
    assert set(boxes) == set(TRACES)
    b = boxes["google_2011"]
    lines = dict(b.lines)
    t = budgets[(budgets["trace"] == "google_2011") & (budgets["budget"] == 0.02) & (budgets["cap_mode"] == "enforced")]
    tobit = t.set_index("method").loc["tobit"]
    assert b.title == f"google_2011 (real trace): run {display_name('tobit')}"
    assert lines["What to run"].startswith(f"{display_name('tobit')}: copy when its predicted latency reaches ")
    assert lines["What it buys"] == (f"jobs finish {100 * tobit.jct_reduction:.1f}% sooner on average (95% interval "
                                     f"{100 * tobit.jct_lo:.1f}% to {100 * tobit.jct_hi:.1f}%).")
    assert lines["What it costs"] == f"{100 * tobit.extra_machine_share:.2f}% extra machine time (the budget: 2%)."
    assert lines["Rests on"] == "6 scored jobs, each judged with only the 10 to 15 jobs that ended before it started."
    assert lines["Learned methods"].startswith(f"{display_name('tobit')} beats the free rule "
                                               f"{display_name('spark_speculation')}: +")
    assert "The most copies could buy" in lines
    md = boxes_markdown(list(boxes.values()))
    assert md.startswith("### google_2011 (real trace): run Tobit\n\n- **What to run:** Tobit: copy when")
    view = comparison_view(comparisons)
    assert len(view) == 2 * len(BUDGETS) and (view["verdict"] == "learned above").all()
    assert view["learned method named now"].str.startswith(f"{display_name('tobit')} (named for 6 of 6 jobs)").all()
    # the budget table at the report's budget: every method once per trace (and Spark as Spark runs it)
    v = budget_view(budgets)
    assert len(v) == len(budgets[budgets["budget"] == 0.02]) and set(v["budget"]) == {"2%"}
    assert len(budget_view(budgets, None)) == len(budgets)
    assert any(label.endswith(", as Spark runs it (no cap)") for label in v["method"])
    assert any(label.endswith("(free rule)") for label in v["method"])
    assert not any(m in set(v["method"]) for m in METHODS if display_name(m) != m)
    # every setting with its unit: no bare "cut 10"
    assert not v["setting (most often chosen)"].str.match(r"^cut [\d.]+$").any()
    # the oracle is the headroom, never a ranked row
    assert "oracle" not in set(budgets["method"])


def test_the_sweep_shows_each_methods_envelope_sorted_as_numbers():
    """The sweep's view: per method the settings no other of its settings beats, sorted by extra machine
    time as numbers, one format per column (two decimals), settings that land together said once."""
    curve = pd.DataFrame([("t", "km_survival", p, 5, c, x) for p, c, x in
                          (("0.999", 0.01, 0.02), ("0.99", 0.01, 0.02), ("0.5", 0.03, 0.12), ("0.9", 0.02, 0.05),
                           ("0.2", 0.025, 0.2), ("0.05", 0.0, 0.0))] +
                         [("t", "spark_speculation", p, 5, c, x) for p, c, x in
                          (("q0.75-m1.5-min60", 0.02, 0.1), ("q0.75-m1.5-min300", 0.01, 0.03),
                           ("q0.75-m12.5-min0.1", 0.015, 0.05))],
                         columns=["trace", "method", "point", "n_jobs", "jct_reduction", "extra_machine_share"])
    v = envelope_view(curve)
    km = v[v["method"] == display_name("km_survival")]
    assert list(km["extra machine time (%)"]) == ["2.00", "5.00", "12.00"]          # 0.2 is beaten by 0.5
    assert km["setting"].iloc[0] == "copy when P(runs past tau_hat) passes 0.99 (and 1 other settings alike)"
    assert list(v[v["method"] == display_name("spark_speculation")]["extra machine time (%)"]) == ["3.00", "5.00", "10.00"]
    assert v["jobs shortened by (%)"].str.fullmatch(r"\d+\.\d\d").all()


def test_the_paragraph_names_the_methods_whose_cheapest_copying_point_is_above_the_smallest_budget():
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


def report_tables(n_jobs: int = 6) -> dict[str, pd.DataFrame]:
    """The tables build_report reads for the operator's answer first (and the paper's job metrics)."""
    jm = _job_metrics(METHODS, n_jobs=n_jobs)
    spec = pd.DataFrame([(t, m, "unlimited", np.nan, 0.1, 0.0, -0.05, 0.02, 3.0, 6, "0,1")
                         for t in TRACES for m in METHODS], columns=SPECULATION_COLUMNS)
    budgets, comparisons, curve = tables()
    return {"job_metrics": jm, "operator_job_metrics": jm, "speculation_times": spec, "matched_budgets": budgets,
            "named_comparisons": comparisons, "sweep_curve": curve}


def test_report_opens_with_the_answer_box_and_fits_1280_px_in_chromium(tmp_path):
    d = tmp_path / "reports"
    build_report(d, report_tables(), n_boot=50)
    md = (d / "report.md").read_text()
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads[:2] == ["## What this run shows",
                         "## The operator's evidence: what copies buy for the machine time they cost"]
    assert heads[-1] == "## Glossary" and len(set(heads)) == len(heads)      # distinct section names
    opening = md.split("## What this run shows")[1].split("\n## ")[0].strip()
    assert opening.startswith("### google_2011 (real trace, 6 jobs): run Tobit") and "### synthetic" in opening
    # the evidence in the order a reader follows: the curves, the methods table, the named comparisons
    h3 = [line for line in md.splitlines() if line.startswith("### ")]
    assert [h.split(". ")[0] for h in h3[2:5]] == ["### Figure 1", "### Table 1", "### Table 2"]
    assert "In words:" in md and "- Named before scoring" in md
    answer = pd.read_csv(d / "answer.csv")
    assert set(answer["trace"]) == set(TRACES) and (answer["item"] == "What it buys").sum() == 2
    probe = """<script>
window.addEventListener('load', () => {
  const box = document.querySelector('div.box');
  const img = document.images[0];
  const out = document.createElement('pre'); out.id = 'first';
  out.textContent = JSON.stringify({text: box ? box.textContent : '', bottom: box ? box.getBoundingClientRect().bottom : 1e9,
                                    alt: img.alt, ok: img.complete && img.naturalWidth > 0,
                                    natural: img.naturalWidth, shown: img.getBoundingClientRect().width});
  document.body.appendChild(out);
});
</script>"""
    first = _probe_in_chromium(d, tmp_path, probe, "first", "--window-size=1280,900")
    assert "What to run:" in first["text"] and "What it buys:" in first["text"] and first["bottom"] < 900
    assert first["alt"].startswith("Figure 1.") and first["ok"] and first["natural"] <= first["shown"] <= 1280
    fit = _probe_in_chromium(d, tmp_path, FIT_PROBE, "fit", "--window-size=1280,900")
    assert fit["page"] <= fit["W"] and fit["cut"] == [], fit
