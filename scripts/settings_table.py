"""Write docs/SETTINGS.md's table from the stages' settings models (stragglers.settings.describe).

    .venv/bin/python scripts/settings_table.py          # rewrite the table in docs/SETTINGS.md
    .venv/bin/python scripts/settings_table.py --check  # exit 1 when docs/SETTINGS.md's table is not the models'
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stragglers.settings import describe

SETTINGS_MD = Path(__file__).resolve().parent.parent / "docs" / "SETTINGS.md"
HEADER = "| variable | default | meaning |"


def settings_table(text: str) -> tuple[int, int]:
    """Where the settings table is in the page's text: (start, end)."""
    start = text.index(HEADER)
    end = text.find("\n\n", start)
    return start, end if end > 0 else len(text.rstrip("\n"))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Write docs/SETTINGS.md's settings table from the stages' settings models.")
    ap.add_argument("--check", action="store_true", help="only check: exit 1 when docs/SETTINGS.md's table is not the models'")
    args = ap.parse_args(argv)
    text = SETTINGS_MD.read_text()
    start, end = settings_table(text)
    if args.check:
        if text[start:end] != describe():
            print(f"{SETTINGS_MD}: the settings table is not the models' (run scripts/settings_table.py)", file=sys.stderr)
            return 1
        return 0
    SETTINGS_MD.write_text(text[:start] + describe() + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
