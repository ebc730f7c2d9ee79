"""Research studies, a folder per topic (studies/README.md), each run as ``python -m studies.<topic>.<name>``."""

import argparse


def warehouse_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """The command line a study of a warehouse starts with: its module as ``prog``, its docstring as the
    help (as written), and the warehouse file."""
    ap = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("warehouse")
    return ap
