"""Failpoints for the fault-injection tests (tests/test_faults.py): named points in the code
where, when ``NURD_FAILPOINT`` names them, the process kills itself with SIGKILL or pauses.

    NURD_FAILPOINT=kill@inside:tasks     # SIGKILL inside tasks' transaction, before COMMIT
    NURD_FAILPOINT=kill@after:jobs       # SIGKILL right after jobs' transaction committed
    NURD_FAILPOINT=pause@after:jobs      # wait there until the file $NURD_FAILPOINT_RESUME exists

Unset (always, outside the tests), a failpoint is one dictionary lookup.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def failpoint(name: str) -> None:
    spec = os.environ.get("NURD_FAILPOINT")
    if not spec or "@" not in spec:
        return
    action, point = spec.split("@", 1)
    if point != name:
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "pause":
        resume = Path(os.environ.get("NURD_FAILPOINT_RESUME", "/nonexistent"))
        print(f"failpoint {name}: paused until {resume} exists", flush=True)
        deadline = time.monotonic() + 120
        while not resume.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
