"""The report of a small run, opened as a new reader would: headless Chromium at 1280 x 900 finds the
answer box on the first screen, no sideways scroll, every figure shown at least at the width it was
drawn for, every glossary term linked at its first use, no long table without its CSV file; the
report and the terminal summary say nothing the run made false; and the README's picture is of
today's report code."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from stragglers.reports.sections.story import terminal_summary
from tests.browser import probe as _probe_in_chromium

ROOT = Path(__file__).resolve().parents[1]

@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """The report of a small run of command 1's chain: the embedded trace (24 jobs generated), NURD and
    the reference rules under both protocols, the simulations, the budgets, the report (real Dagster
    runs on an ephemeral instance, a real DuckDB file)."""
    import dagster as dg
    from dagster_duckdb import DuckDBResource

    from assets import budgets, completion, prediction, reports, traces, warehouse
    from assets.resources import PipelineSettings
    from stragglers.prediction.methods import REFERENCE_RULES

    data = tmp_path_factory.mktemp("small_run")
    res = {"nurd": PipelineSettings(data_dir=str(data), synthetic_jobs=24, workers=1, n_boot=50),
           "duckdb": DuckDBResource(database=str(data / "warehouse.duckdb"))}
    instance = dg.DagsterInstance.ephemeral()
    chain = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
             warehouse.checkpoint_features, prediction.nurd_eval]
    assert dg.materialize(chain, resources=res, instance=instance).success
    for rule in REFERENCE_RULES:
        assert dg.materialize([prediction.baseline_eval], partition_key=rule, resources=res, instance=instance).success
    steps = [completion.completion_times, budgets.operator_budgets, reports.comparison_tables]
    assert dg.materialize(steps + [prediction.nurd_eval, prediction.baseline_eval], selection=steps, resources=res,
                          instance=instance).success
    return data


BROWSER_CHECK = """<script>
window.addEventListener('load', () => {
  const W = document.documentElement.clientWidth;
  const box = document.querySelector('div.box');
  const figures = [...document.images].map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0,
                                                 natural: i.naturalWidth, shown: i.getBoundingClientRect().width}));
  // each glossary term: its first use in the text (outside headings, the contents, code and the glossary)
  // must sit in a link to its entry; a use inside another term's link is part of that term
  const skip = 'h1, h2, h3, h4, h5, h6, nav, code, pre, script, style, section#glossary';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const texts = []; let node; while ((node = walker.nextNode())) texts.push(node);
  const terms = [...document.querySelectorAll('section#glossary li[data-pattern]')].map(li => {
    const re = new RegExp(li.dataset.pattern, li.dataset.flags);
    for (const t of texts) {
      const el = t.parentElement;
      if (el.closest(skip) || !re.test(t.textContent)) continue;
      const link = el.closest('a');
      if (!link) return {term: li.id, first: 'unlinked', text: t.textContent.slice(0, 120)};
      if (link.classList.contains('term') && link.getAttribute('href') === '#' + li.id) return {term: li.id, first: 'linked'};
    }
    return {term: li.id, first: 'unused'};
  });
  // each table: its rows (family header rows aside) and whether its section links a CSV file
  const tables = [...document.querySelectorAll('table')].map(t => {
    let csv = false, h = t.previousElementSibling;
    for (; h && !/^H[23]$/.test(h.tagName); h = h.previousElementSibling)
      if (h.querySelector && h.querySelector('a[href$=".csv"]')) csv = true;
    return {heading: h ? h.textContent : '', csv,
            rows: [...t.querySelectorAll('tbody tr')].filter(tr => !tr.classList.contains('band-head')).length};
  });
  const out = document.createElement('pre'); out.id = 'check';
  out.textContent = JSON.stringify({W, page: document.documentElement.scrollWidth, scrollX: window.scrollX,
    box: box ? {bottom: box.getBoundingClientRect().bottom + window.scrollY, text: box.innerText} : null,
    figures, terms, tables});
  document.body.appendChild(out);
});
</script>"""


def test_a_new_reader_opens_a_small_runs_report_in_chromium(small_run, tmp_path):
    """README command 1's report, opened at 1280 x 900: no sideways scroll, the answer box on the first
    screen, every figure shown at least at the width it was drawn for with text no smaller than the
    page's small print, every glossary term linked at its first use, no long table without its CSV."""
    from PIL import Image

    from stragglers.reports.page.publish import MAX_SHOWN_ROWS

    reports = small_run / "reports"
    seen = _probe_in_chromium(reports, tmp_path, BROWSER_CHECK, "check", "--window-size=1280,900")
    assert 1200 <= seen["W"] <= 1280 and seen["page"] <= seen["W"], (seen["W"], seen["page"])
    box = seen["box"]
    assert box is not None and box["bottom"] < 900, box
    for said in ("What to run:", "What it buys:", "What it costs:", "Rests on:", "For the researcher:"):
        assert said in box["text"], (said, box["text"])
    # the box says what the run's table answer.csv says (the terminal summary prints the same rows)
    answer = pd.read_csv(reports / "answer.csv")
    assert answer["text"].iloc[0] in box["text"] and len(answer) >= 6
    assert seen["figures"] and all(f["ok"] and f["natural"] <= f["shown"] + 0.5 for f in seen["figures"]), \
        seen["figures"]
    for png in reports.glob("*.png"):
        assert float(Image.open(png).info["min_font_px"]) >= 12, png.name      # the tables' print: 12 px
    used = [t for t in seen["terms"] if t["first"] != "unused"]
    assert len(used) >= 15 and [t for t in used if t["first"] != "linked"] == [], \
        [t for t in used if t["first"] != "linked"]
    assert {"g-pp", "g-headroom", "g-budget", "g-m-nurd", "g-m-gbtr"} <= {t["term"] for t in used}
    assert seen["tables"] and all(t["rows"] <= MAX_SHOWN_ROWS or t["csv"] for t in seen["tables"]), seen["tables"]
    assert all(t["csv"] for t in seen["tables"]), [t["heading"] for t in seen["tables"] if not t["csv"]]


def test_the_small_runs_report_says_nothing_the_run_made_false(small_run):
    """Row counts, traces and methods as the run has them; signs and words that agree."""
    md = (small_run / "reports" / "report.md").read_text()
    for m in re.finditer(r"Files: \[(\w+)\.csv\]\(\w+\.csv\) \((\d+) rows?", md):
        assert len(pd.read_csv(small_run / "reports" / f"{m.group(1)}.csv")) == int(m.group(2)), m.group(0)
    assert "No baseline has been evaluated" not in md
    traces = pd.read_csv(small_run / "reports" / "traces.csv")
    assert list(traces["trace"]) == ["synthetic"]
    # a table of the paper's protocol that lengthens jobs is a change; the protocols' difference is said
    assert "Reduction in job completion time" not in md
    assert "kills a flagged task and restarts it" in md or "lengthens" not in md
    # every sweep point with its unit, numbers sorted as numbers
    assert not re.search(r"\| cut \d[\d.]* +\|", md)


def test_the_terminal_summary_says_where_the_answer_is_and_agrees_with_the_box(small_run):
    text = terminal_summary(small_run)
    answer = pd.read_csv(small_run / "reports" / "answer.csv")
    assert f"The answer (the box at the top of {small_run / 'reports' / 'report.html'}):" in text
    flat = " ".join(text.split())
    assert all(" ".join(str(t).split()) in flat for t in answer["text"]), answer["text"].tolist()


def test_the_readmes_picture_is_of_todays_report_code():
    """docs/img/report.png carries the digest of the code that drew it (scripts/screenshots.py): when the
    report's code changes, retake it (`python scripts/screenshots.py --only report` after command 1)."""
    from stragglers.reports.page.code_digest import png_digest, report_code_digest

    assert png_digest(ROOT / "docs" / "img" / "report.png") == report_code_digest(), (
        "docs/img/report.png is older than the report's code: run command 1, then "
        "python scripts/screenshots.py --only report")
