"""Write the README's settings table from the stages' settings models (stragglers.settings.describe).

    .venv/bin/python scripts/settings_table.py          # rewrite the table in README.md
    .venv/bin/python scripts/settings_table.py --check  # exit 1 when README.md's table is not the models'
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stragglers.settings import describe

README = Path(__file__).resolve().parent.parent / "README.md"
HEADER = "| variable | default | meaning |"


def readme_table(text: str) -> tuple[int, int]:
    """Where the settings table is in the README's text: (start, end)."""
    start = text.index(HEADER, text.index("\n## Settings"))
    return start, text.index("\n\n", start)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Write README.md's settings table from the stages' settings models.")
    ap.add_argument("--check", action="store_true", help="only check: exit 1 when README.md's table is not the models'")
    args = ap.parse_args(argv)
    text = README.read_text()
    start, end = readme_table(text)
    if args.check:
        if text[start:end] != describe():
            print(f"{README}: the settings table is not the models' (run scripts/settings_table.py)", file=sys.stderr)
            return 1
        return 0
    README.write_text(text[:start] + describe() + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
