"""Headless Chromium for the report's tests: load report.html with a script appended and read back the
JSON the script writes into the page (``probe``), skipping in one line where Chromium is absent; and
the scripts the tests append (``PROBE``, ``FIT_PROBE``, ``READ_PROBE``)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def probe(report_dir: Path, tmp_path: Path, script: str, pre_id: str, *args: str) -> dict:
    """report.html with ``script`` appended, loaded in headless Chromium; the JSON the script writes
    into <pre id=pre_id>. Skips where Chromium is absent."""
    browser = _chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    page = tmp_path / f"{pre_id}.html"
    page.write_text((report_dir / "report.html").read_text().replace("</body>", script + "</body>"))
    out = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--no-first-run", f"--user-data-dir={tmp_path / f'{pre_id}-profile'}", *args,
                          "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    m = re.search(rf'<pre id="{pre_id}">(.*?)</pre>', out.stdout, re.S)
    assert m, f"the page did not finish loading in Chromium: {out.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


PROBE = """<script>
window.addEventListener('load', () => {
  const out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify({
    images: [...document.images].map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0,
                                             width: i.naturalWidth})),
    sections: [...document.querySelectorAll('h1, h2, h3')].map(h => h.id),
    bands: document.querySelectorAll('tr.band-reference-rules').length,
  });
  document.body.appendChild(out);
});
</script>"""


FIT_PROBE = """<script>
window.addEventListener('load', () => {
  // every element whose right edge passes the window's, unless a scroll box that fits holds it
  const W = document.documentElement.clientWidth, cut = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.getBoundingClientRect().right <= W + 1) continue;
    let p = el.parentElement, boxed = false;
    for (; p && p !== document.body; p = p.parentElement) {
      const ox = getComputedStyle(p).overflowX;
      if ((ox === 'auto' || ox === 'scroll') && p.getBoundingClientRect().right <= W + 1) { boxed = true; break; }
    }
    if (!boxed) cut.push(el.tagName + ' ' + (el.textContent || '').trim().slice(0, 50));
  }
  const scrolls = t => t.scrollWidth > t.clientWidth + 1;
  let h = document.querySelector('[id$="headline-numbers-under-the-paper-s-protocol"]');
  while (h && h.tagName !== 'TABLE') h = h.nextElementSibling;
  const out = document.createElement('pre'); out.id = 'fit';
  out.textContent = JSON.stringify({W, page: document.documentElement.scrollWidth, cut,
                                    headline: h ? (scrolls(h) ? 'scrolls' : 'fits') : 'missing',
                                    tables: document.querySelectorAll('table').length});
  document.body.appendChild(out);
});
</script>"""


READ_PROBE = """<script>
window.addEventListener('load', () => {
  const W = document.documentElement.clientWidth;
  const tables = [...document.querySelectorAll('table')].map(t => {
    let h = t.previousElementSibling;
    while (h && !/^H[23]$/.test(h.tagName)) h = h.previousElementSibling;
    const head = [...t.querySelectorAll('thead th')].map(th => th.textContent.trim());
    const rows = [...t.querySelectorAll('tbody tr')].filter(tr => !tr.classList.contains('band-head'))
      .map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent.trim()));
    return {heading: h ? h.textContent : '', wide: t.scrollWidth > t.clientWidth + 1,
            right: t.getBoundingClientRect().left + t.scrollWidth, head, rows};
  });
  const out = document.createElement('pre'); out.id = 'read';
  out.textContent = JSON.stringify({W, page: document.documentElement.scrollWidth, tables,
                                    headings: [...document.querySelectorAll('h1, h2, h3')].map(h => h.textContent),
                                    text: document.body.innerText});
  document.body.appendChild(out);
});
</script>"""
