"""What limits a policy's copies: a budget of extra machine time, Hadoop's caps, or nothing.

- ``Budget(share)``: at each check the room is share x the budget's base (``job.CheckState.base``:
  the job's machine time as the scheduler can put it then) less what the copies hold: a running copy
  holds its lease, an ended one what it ran. The policy's tasks get copies in its order while the
  room holds each copy's expected machine time (``job.CheckState.cost``: a policy's copy cannot know
  how long it will run), and they share the room as their leases, in proportion to those costs. A
  copy still running when its lease ends is killed and its task goes on with its original, as a
  scheduler that reserves machine time for its copies must (Mantri kills copies that do not pay
  off); a copy that ends sooner gives the rest back. A task refused for want of room is asked again
  at the next check. The oracle knows how long each copy would run: it copies, in its order, while
  the room holds each copy's own run, on a lease of exactly that run. The spend is held within
  share x the largest base of the job; where the early estimate of the job's machine time is above
  what the job turns out to cost, a job spends above share x its machine time (counted in the tables).
- ``HadoopCaps``: Hadoop MapReduce's DefaultSpeculator: at most max(10, 10% of the running tasks,
  1% of all tasks) copies running at once; no budget of machine time, no lease.
- ``Uncapped``: every task the policy ranks gets a copy at the check (the cost curves' copies).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    share: float

    def __post_init__(self) -> None:
        if not self.share > 0:
            raise ValueError(f"a budget of extra machine time must be a share > 0, not {self.share!r}")

    @property
    def label(self) -> str:
        return f"{self.share:g}"


@dataclass(frozen=True)
class HadoopCaps:
    """mapreduce.job.speculative.* defaults: minimum allowed, share of the running, share of all."""
    minimum: int = 10
    running_share: float = 0.1
    all_share: float = 0.01

    @property
    def label(self) -> str:
        return "hadoop"


@dataclass(frozen=True)
class Uncapped:
    @property
    def label(self) -> str:
        return "none"


Cap = Budget | HadoopCaps | Uncapped


def cap_from_label(label: str) -> Cap:
    """The cap a table's ``cap`` column names ('0.02', 'hadoop', 'none')."""
    if label == "hadoop":
        return HadoopCaps()
    if label == "none":
        return Uncapped()
    return Budget(float(label))
