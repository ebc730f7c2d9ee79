"""The operator's answer on a directory of Spark event logs: ``nurd-spark advise`` itself
(stragglers/advice/spark.py), with ``--doc`` writing what it prints into docs/EVALUATION.md between
its markers. Every other argument is the command's (``--budget``, ``--out``).

    .venv/bin/python -m studies.spark.spark_answer ../shared/realdata/spark_eventlogs [--budget 2%] [--doc docs/EVALUATION.md]

Run it from the project root (``-m``: the ``studies`` package); ``../shared/realdata/spark_eventlogs``
exists where the shared real data sits beside the clone (CI's layout).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path

from stragglers.advice.spark import main as nurd_spark

DOC_START = "<!-- measured: studies/spark/spark_answer.py DIR --doc docs/EVALUATION.md -->"
DOC_END = "<!-- end of measured answer -->"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m studies.spark.spark_answer",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--doc", type=Path, help="write the answer into this doc between its markers")
    args, advise_args = parser.parse_known_args(argv)
    if not args.doc:
        return nurd_spark(["advise", *advise_args])
    with tempfile.TemporaryDirectory(prefix="spark-answer-") as tmp:
        # the files go to a temporary folder unless --out is given: the doc holds the answer
        out = [] if "--out" in advise_args else ["--out", str(Path(tmp) / "spark-defaults.conf")]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = nurd_spark(["advise", *advise_args, *out])
    text = printed.getvalue()
    print(text, end="")
    if code == 0:
        answer = "\n".join(line for line in text.splitlines() if not line.startswith("Wrote "))
        command = " ".join(["nurd-spark advise", *advise_args])
        doc = args.doc.read_text()
        start, end = doc.index(DOC_START) + len(DOC_START), doc.index(DOC_END)
        args.doc.write_text(doc[:start] + f"\n```\n$ {command}\n{answer}\n```\n" + doc[end:])
    return code


if __name__ == "__main__":
    sys.exit(main())
