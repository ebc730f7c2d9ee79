"""Write docs/RESULTS.md from the CSV files of a run's report (data/reports/*.csv).

    .venv/bin/python scripts/results.py                       # data/reports -> docs/RESULTS.md
    .venv/bin/python scripts/results.py --reports DIR --out FILE

Run it after README command 1 (or any run that published the report); it reads only the
report's folder and writes only --out.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
from stragglers.reports.results import results_markdown


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    default = Path(os.environ.get("NURD_DATA_DIR") or ROOT / "data") / "reports"
    ap.add_argument("--reports", default=str(default), help=f"the report's folder (default {default})")
    ap.add_argument("--out", default=str(ROOT / "docs" / "RESULTS.md"), help="the page to write")
    args = ap.parse_args()
    reports = Path(args.reports)
    if not (reports / "report.md").exists():
        raise SystemExit(f"results: no report in {reports} (run README command 1 first)")
    try:
        text = results_markdown(reports)
    except ValueError as e:
        raise SystemExit(f"results: {e}")
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"results: wrote {args.out} from {reports}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
