"""Several `dagster asset materialize -m pipeline` runs, one after the other, in one Python process.

    .venv/bin/python scripts/materialize.py SELECTION[@PARTITION] ...

Each argument is one Dagster run, exactly what
`dagster asset materialize -m pipeline --select SELECTION [--partition PARTITION]` launches (the
same code of Dagster's CLI, on the instance of DAGSTER_HOME); the runs go in the order given and
the first that fails stops the rest. What it saves is the start of each command: Python, Dagster
and the project's code are loaded once instead of once per run. scripts/main_job.sh uses it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parse_run(arg: str) -> tuple[str, str | None]:
    """'SELECTION@PARTITION' -> (selection, partition); no '@' -> (selection, None)."""
    select, _, partition = arg.partition("@")
    if not select or (("@" in arg) and not partition):
        raise SystemExit(f"materialize: {arg!r} is not SELECTION or SELECTION@PARTITION")
    return select, partition or None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="SELECTION[@PARTITION]", help="one Dagster run each")
    runs = [parse_run(a) for a in ap.parse_args().runs]
    # Dagster's CLI is its own code: called here as `dagster asset materialize` calls it; it imports the
    # module `pipeline` from the working directory, the project root, as `-m pipeline` does from there
    from dagster import DagsterInstance
    from dagster._cli.asset import execute_materialize_command
    from dagster_shared.cli import PythonPointerOpts

    pointer = PythonPointerOpts(module_name="pipeline", working_directory=str(ROOT))
    with DagsterInstance.get() as instance:
        for select, partition in runs:
            print(f"materialize: --select {select}" + (f" --partition {partition}" if partition else ""), flush=True)
            execute_materialize_command(instance=instance, select=select, partition=partition, partition_range=None,
                                        config=(), config_json=None, python_pointer_opts=pointer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
