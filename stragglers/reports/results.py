"""docs/RESULTS.md from a published report: the report's tables as its CSV files hold them.

A doc that quotes a run's numbers quotes them from this page, which is written from the CSV
files of the report (``data/reports/*.csv``), never typed: each table in the order and under
the heading the report gives it, every cell the CSV's text as it is.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

#: a table longer than this shows its first rows and says where the rest is (the per-job tables)
MAX_ROWS = 40
_FILES = re.compile(r"Files: \[([\w.-]+)\.csv\]")


def report_tables(report_dir: Path) -> list[tuple[str, str]]:
    """(table name, heading) of every CSV table report.md links, in its order (a table's heading is the
    last one above its files' line: "Table 3. ...")."""
    heading, out = "", []
    for line in (Path(report_dir) / "report.md").read_text(encoding="utf-8").splitlines():
        if line.startswith(("## ", "### ")):
            heading = line.split(" ", 1)[1].strip()
        m = _FILES.match(line)
        if m:
            out.append((m.group(1), heading))
    return out


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a CSV file, every cell its text."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty CSV file (not even a header)")
    return rows[0], rows[1:]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def results_markdown(report_dir: Path, *, source: str = "data/reports") -> str:
    """The page: what it is, then per table its heading, its file and its rows."""
    report_dir = Path(report_dir)
    tables = report_tables(report_dir)
    if not tables:
        raise ValueError(f"{report_dir / 'report.md'}: links no CSV table (is it a report?)")
    lines = ["# Results of a run", "",
             f"What the report of a run says, in numbers: every table of its report, read from its CSV files "
             f"(`{source}/*.csv`) by `scripts/results.py`, which wrote this page. The docs quote a run's "
             "numbers from here; to see your own run's, run `python scripts/results.py` after command 1. "
             "The report (`report.html`) explains each table; a blank cell is a value the run did not "
             "produce.", ""]
    for name, heading in tables:
        header, rows = read_csv(report_dir / f"{name}.csv")
        lines += [f"## {heading}", "", f"`{name}.csv`, {len(rows)} row{'' if len(rows) == 1 else 's'}"
                  + (f"; the first {MAX_ROWS}:" if len(rows) > MAX_ROWS else ":"), ""]
        lines += ["| " + " | ".join(_cell(c) for c in header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows[:MAX_ROWS]]
        lines.append("")
    return "\n".join(lines)


def parse_results(text: str) -> dict[str, tuple[list[str], list[list[str]]]]:
    """Table name -> (header, rows) as the page shows them (the inverse of results_markdown)."""
    out: dict[str, tuple[list[str], list[list[str]]]] = {}
    name = None
    for line in text.splitlines():
        m = re.match(r"`([\w.-]+)\.csv`, \d+ rows?", line)
        if m:
            name = m.group(1)
            continue
        if name and line.startswith("|"):
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
            if name not in out:
                out[name] = (cells, [])
            elif set(line) - set("|-"):
                out[name][1].append(cells)
    return out
