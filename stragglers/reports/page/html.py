"""report.md and its PNGs as one self-contained HTML page (``report.html``).

Markdown is rendered by markdown-it-py (CommonMark + GFM tables); every
``<img src="x.png">`` next to report.md is inlined as a base64 data URL, so
the page can be mailed or opened anywhere. Table rows between a band header
(a row whose first cell is ``BAND_MARK`` + family name) and the next one get
the class ``band-<family>``: the reference rules are shaded as a band of
their own. Headings get ids (``section_id``) so a reader or a test can find
every section. The opening section ("What this run shows") holds one answer box per trace
(``_answer_boxes``), the contents follow it, and each glossary term's first use in the text links
to its entry (``link_first_uses``; the glossary's entries carry their patterns, so a browser can
check the links on its own).
"""

from __future__ import annotations

import base64
import html as htmllib
import re
from pathlib import Path
from typing import Sequence

BAND_MARK = "▸ "          # first cell of a family's header row in the Markdown tables

_CSS = """
body { font-family: Georgia, 'DejaVu Serif', serif; max-width: 1180px; margin: 0.8em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.5em; margin: 0.3em 0; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { margin-top: 1.5em; }
p.notes { font-family: 'DejaVu Sans', Arial, sans-serif; font-size: 13px; color: #555; margin: 0.2em 0 0.6em; }
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
      border: 1px solid #e3e3e3; margin-top: 1em; } nav ol { margin: 0.3em 0; columns: 2; }
/* the answer: one box per trace, side by side when there are several */
div.answer { display: flex; flex-wrap: wrap; gap: 12px; }
div.box { flex: 1 1 420px; border: 2px solid #2b6cb0; border-radius: 6px; background: #f4f8fd;
          padding: 0 1em 0.3em; font-size: 15px; line-height: 1.4; }
div.box h3 { margin: 0.5em 0 0.3em; font-size: 1.15em; }
div.box ul { margin: 0; padding-left: 1.1em; } div.box li { margin: 0.15em 0; }
div.box pre { margin: 0.3em 0; font-size: 13px; }
a.term { color: inherit; text-decoration: underline dotted #2b6cb0; }
section#glossary li { margin: 0.3em 0; }
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


#: elements whose text is not a use of a term: headings, the contents, code, links, the glossary itself
SKIP_TAGS = ("a", "h1", "h2", "h3", "h4", "h5", "h6", "nav", "code", "pre", "script", "style", "title", "section")


def link_first_uses(body: str, terms: Sequence) -> str:
    """``body`` with each term's first use in the text (outside ``SKIP_TAGS``) linked to its glossary
    entry (``#g-<key>``). The earliest match wins, the longer one where two start together; a term
    whose match falls inside another's link is looked for further on."""
    pending = list(terms)
    out, skipping = [], []
    for piece in re.split(r"(<[^>]*>)", body):
        if piece.startswith("<"):
            m = re.match(r"<(/?)([a-zA-Z0-9]+)", piece)
            if m and m.group(2).lower() in SKIP_TAGS and not piece.endswith("/>"):
                if m.group(1):
                    if skipping and skipping[-1] == m.group(2).lower():
                        skipping.pop()
                else:
                    skipping.append(m.group(2).lower())
            out.append(piece)
            continue
        if skipping or not pending or not piece.strip():
            out.append(piece)
            continue
        pos, linked = 0, []
        while pending:
            found = [(mm.start(), -len(mm.group()), i, mm) for i, t in enumerate(pending)
                     if (mm := t.regex.search(piece, pos))]
            if not found:
                break
            _, _, i, mm = min(found, key=lambda f: f[:3])
            term = pending.pop(i)
            linked += [piece[pos:mm.start()], f'<a class="term" href="#g-{term.key}">{mm.group()}</a>']
            pos = mm.end()
        out.append("".join(linked) + piece[pos:])
    return "".join(out)


def _answer_boxes(body: str) -> str:
    """The opening section's boxes: each trace's heading and its lines in a box of their own."""
    m = re.search(r'<h2 id="what-this-run-shows">.*?</h2>', body)
    if not m:
        return body
    end = body.find("<h2", m.end())
    end = len(body) if end < 0 else end
    parts = re.split(r"(?=<h3[ >])", body[m.end():end])
    if len(parts) < 2:
        return body
    boxes = parts[0] + '<div class="answer">' + "".join(f'<div class="box">{p}</div>' for p in parts[1:]) + "</div>"
    return body[:m.end()] + boxes + body[end:]


def _glossary(body: str, terms: Sequence) -> str:
    """The glossary as a section whose entries carry their anchors and patterns."""
    m = re.search(r'<h2 id="glossary">', body)
    if not m:
        return body
    by_name = {htmllib.escape(t.name, quote=False): t for t in terms}

    def entry(li: re.Match) -> str:
        t = by_name.get(li.group(1))
        if t is None:
            return li.group(0)
        return (f'<li id="g-{t.key}" data-pattern="{htmllib.escape(t.pattern)}" '
                f'data-flags="{"i" if t.ignore_case else ""}"><strong>{li.group(1)}</strong>')
    section = re.sub(r"<li><strong>(.*?)</strong>", entry, body[m.start():])
    return body[:m.start()] + '<section id="glossary">' + section + "</section>"


def _nav(body: str) -> str:
    """The contents (chapters, and their tables and figures), after the opening section."""
    items, chapter = [], None
    for tag, sid, heading in re.findall(r'<(h[23]) id="([^"]+)">(.*?)</h[23]>', body):
        if tag == "h2" and sid != "what-this-run-shows":
            chapter = []
            items.append((sid, heading, chapter))
        elif tag == "h3" and chapter is not None:
            chapter.append((sid, heading))
    if not items:
        return body
    nav = "<nav><strong>Contents</strong><ol>" + "".join(
        f'<li><a href="#{sid}">{heading}</a>'
        + ("<ul>" + "".join(f'<li><a href="#{s}">{h}</a></li>' for s, h in sub) + "</ul>" if sub else "") + "</li>"
        for sid, heading, sub in items) + "</ol></nav>"
    opening = re.search(r'<h2 id="what-this-run-shows">', body)
    first = re.search(r"<h2 ", body[opening.end():]) if opening else None
    at = opening.end() + first.start() if first else body.index("</h1>") + len("</h1>")
    return body[:at] + nav + body[at:]


def render_html(report_md: Path, out: Path | None = None, terms: Sequence = ()) -> Path:
    """Write ``report.html`` beside ``report_md`` (or at ``out``); returns its path. ``terms``: the
    glossary's terms (stragglers.reports.page.glossary), each first use linked to its entry."""
    from markdown_it import MarkdownIt

    report_md = Path(report_md)
    text = report_md.read_text(encoding="utf-8")
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    body = _bands(_ids(_inline_images(md.render(text), report_md.parent)))
    body = _nav(_answer_boxes(body))
    body = link_first_uses(_glossary(body, terms), terms)
    # the line under the title (the run's traces and seeds) in small print
    body = re.sub(r"(</h1>\s*)<p>", r'\1<p class="notes">', body, count=1)
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "Report")
    page = (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{htmllib.escape(title)}</title><style>{_CSS}</style></head>\n"
            f"<body>\n{body}\n</body></html>\n")
    out = Path(out) if out else report_md.with_name("report.html")
    out.write_text(page, encoding="utf-8")
    return out
