"""report.md and its PNGs as one self-contained HTML page (``report.html``).

Markdown is rendered by markdown-it-py (CommonMark + GFM tables); every
``<img src="x.png">`` next to report.md is inlined as a base64 data URL, so
the page can be mailed or opened anywhere. Table rows between a band header
(a row whose first cell is ``BAND_MARK`` + family name) and the next one get
the class ``band-<family>``: the reference rules are shaded as a band of
their own. Headings get ids (``section_id``) so a reader or a test can find
every section.
"""

from __future__ import annotations

import base64
import html as htmllib
import re
from pathlib import Path

BAND_MARK = "▸ "          # first cell of a family's header row in the Markdown tables

_CSS = """
body { font-family: Georgia, 'DejaVu Serif', serif; max-width: 1180px; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; font-family: 'DejaVu Sans', Arial, sans-serif; font-size: 12px;
        margin: 0.5em 0 1em; display: block; overflow-x: auto; max-width: 100%; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 2px 8px; text-align: right; white-space: nowrap; }
/* headers wrap (long names with units), cells do not: a table is as wide as its values */
th { background: #f3f3f3; position: sticky; top: 0; white-space: normal; vertical-align: bottom; }
td:first-child, td:nth-child(2), th:first-child, th:nth-child(2) { text-align: left; }
tr.band-head td { background: #eaeaea; font-weight: bold; text-align: left; white-space: normal; }
tr.band-reference-rules td { background: #fde0c5; }
tr.band-head.band-reference-rules td { background: #f8c18f; }
tr.nurd td { font-weight: bold; }
blockquote { margin: 0.3em 0 1.2em; padding: 0.2em 1em; border-left: 4px solid #bbb; color: #444;
             font-size: 0.92em; background: #fafafa; }
nav { font-family: 'DejaVu Sans', Arial, sans-serif; font-size: 13px; background: #f7f7f7; padding: 0.5em 1em;
      border: 1px solid #e3e3e3; } nav ol { margin: 0.3em 0; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
code { font-size: 0.9em; background: #f4f4f4; padding: 0 3px; }
"""


def section_id(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"


def _inline_images(body: str, base: Path) -> str:
    def repl(m: re.Match) -> str:
        src = htmllib.unescape(m.group(2))
        if src.startswith("data:") or "://" in src:
            return m.group(0)
        path = base / src
        if not path.is_file():
            raise FileNotFoundError(f"report image {path} (referenced in report.md) does not exist")
        data = base64.b64encode(path.read_bytes()).decode()
        return f'{m.group(1)}"data:image/png;base64,{data}"'
    return re.sub(r'(<img\s+src=)"([^"]+)"', repl, body)


def _ids(body: str) -> str:
    def repl(m: re.Match) -> str:
        text = re.sub(r"<[^>]+>", "", m.group(2))
        return f'<{m.group(1)} id="{section_id(htmllib.unescape(text))}">{m.group(2)}</{m.group(1)}>'
    return re.sub(r"<(h[1-3])>(.*?)</h[1-3]>", repl, body)


def _bands(body: str) -> str:
    """Tag table rows with the family band they belong to."""
    out, band = [], ""
    for piece in re.split(r"(<tr>.*?</tr>)", body, flags=re.S):
        if piece.startswith("<table"):
            band = ""
        if piece.startswith("<tr>") and "<td" in piece:
            first = re.search(r"<td[^>]*>(.*?)</td>", piece, flags=re.S)
            cell = htmllib.unescape(re.sub(r"<[^>]+>", "", first.group(1))) if first else ""
            classes = []
            if cell.startswith(BAND_MARK.strip()):
                band = section_id(cell.replace(BAND_MARK.strip(), "").split("(")[0])
                classes.append("band-head")
            if band:
                classes.append(f"band-{band}")
            if re.search(r"<td[^>]*>(<strong>)?NURD(</strong>)?</td>", piece):
                classes.append("nurd")
            if "band-head" in classes:
                # one cell across the row: the family's note wraps instead of widening the first column
                piece = f'<tr><td colspan="{piece.count("<td")}">{first.group(1)}</td></tr>'
            if classes:
                piece = piece.replace("<tr>", f'<tr class="{" ".join(classes)}">', 1)
        elif "<table" in piece:
            band = ""
        out.append(piece)
    return "".join(out)


def render_html(report_md: Path, out: Path | None = None) -> Path:
    """Write ``report.html`` beside ``report_md`` (or at ``out``); returns its path."""
    from markdown_it import MarkdownIt

    report_md = Path(report_md)
    text = report_md.read_text(encoding="utf-8")
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    body = _bands(_ids(_inline_images(md.render(text), report_md.parent)))
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "Report")
    sections = re.findall(r'<h2 id="([^"]+)">(.*?)</h2>', body)
    if sections:
        nav = "<nav><strong>Contents</strong><ol>" + "".join(
            f'<li><a href="#{sid}">{heading}</a></li>' for sid, heading in sections) + "</ol></nav>"
        body = body.replace("</h1>", "</h1>" + nav, 1)
    page = (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{htmllib.escape(title)}</title><style>{_CSS}</style></head>\n"
            f"<body>\n{body}\n</body></html>\n")
    out = Path(out) if out else report_md.with_name("report.html")
    out.write_text(page, encoding="utf-8")
    return out
