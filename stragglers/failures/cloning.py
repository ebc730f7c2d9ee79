"""Proactive cloning (El-Sayed, Zhu, Schroeder, ICDCS 2017, Section VI-B, Algorithm 1),
replayed on the trace's task attempts.

A task's attempts run as in the trace (same durations and exit statuses, in the same
order), except when they start: the first time the attempt-failure predictor scores a
started attempt at or above the threshold, k = min(C - c, R - r) clones start at once,
taking the next attempts of the trace; after a failed attempt a retry starts after the
trace's own delay (its SUBMIT/SCHEDULE gap) if r < R. The first FINISH completes the
task (the attempts still running are killed); when every started attempt has failed and
no retry may start, the task has failed. A clone beyond the trace's attempts replays the
task's last attempt (same duration and status): that is the extra work of a false
positive. Work = the time attempts ran; overhead = extra work over the trace's work.

Decisions (docs/FAILURES.md): Algorithm 1 line 6 reads k := min{1, R - r, C - c}; Table V
varies C from 1 to 3 clones started on one prediction, so k = min(C - c, R - r) here. The
predictor scores an attempt when it starts (its features are known then). The retry cap R
applies to the replay only; the trace's completion time is the reference.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Attempt:
    duration: float        # seconds
    failed: bool           # FAIL (True) or FINISH (False)
    gap: float = 0.0       # trace delay between the previous attempt's end and this one's start


def original(attempts: list[Attempt]) -> tuple[float, float]:
    """(completion time, work) of the task as in the trace."""
    t = 0.0
    for i, a in enumerate(attempts):
        t += (a.gap if i else 0.0) + a.duration
    return t, float(sum(a.duration for a in attempts))


def replay(attempts: list[Attempt], scores, threshold: float, retries: int, clones: int) -> tuple[float, float]:
    """(completion time, work) of one task under Algorithm 1 (see module doc)."""
    if not attempts:
        raise ValueError("a task needs at least one attempt")
    n = len(attempts)
    scores = list(scores) + [0.0] * (n - len(list(scores)))
    nxt = 1                 # next trace attempt to start
    r = c = 0
    predicted = False
    events: list = []       # (time, order, kind, start, attempt)
    order = 0
    work = 0.0
    running: dict[int, tuple[float, Attempt]] = {}

    def attempt_at(i: int) -> Attempt:
        return attempts[i] if i < n else attempts[-1]

    def start(t: float, i: int) -> None:
        nonlocal order, predicted, nxt, r, c
        a = attempt_at(i)
        running[order] = (t, a)
        heapq.heappush(events, (t + a.duration, order))
        order += 1
        if not predicted and i < n and scores[i] >= threshold:
            predicted = True
            k = max(0, min(clones - c, retries - r))
            for _ in range(k):
                j = nxt
                nxt += 1
                c += 1
                r += 1
                start(t, j)

    start(0.0, 0)
    pending: list = []      # (start time, trace attempt) of retries waiting for their delay
    while events or pending:
        t_end = events[0][0] if events else np.inf
        t_pend = pending[0][0] if pending else np.inf
        if t_pend < t_end:
            t, i = heapq.heappop(pending)
            start(t, i)
            continue
        t, key = heapq.heappop(events)
        t0, a = running.pop(key)
        work += a.duration
        if not a.failed:
            # done: kill what still runs, count its work so far; cancel waiting retries
            work += sum(t - s for s, _ in running.values())
            return t, work
        if r < retries and nxt < n:
            i = nxt
            nxt += 1
            r += 1
            heapq.heappush(pending, (t + attempts[i].gap, i))
        if not events and not pending:
            return t, work
    raise AssertionError("unreachable")


def replayable(attempts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tasks the replay can use: every attempt inside the window and ended by FAIL or
    FINISH, FINISH only as the last one. Returns their keys and a count of tasks by reason."""
    a = attempts[["job_id", "task_id", "attempt", "duration_s", "end_event"]].sort_values(
        ["job_id", "task_id", "attempt"])
    ev = a["end_event"].astype("float64").fillna(-1).astype(int)
    a = a.assign(open=a["duration_s"].isna().to_numpy() | (ev == -1).to_numpy(),
                 other_end=~ev.isin([-1, 3, 4]), finish=(ev == 4).astype(int), ev=ev)
    per = a.groupby(["job_id", "task_id"], sort=False).agg(
        open=("open", "any"), other_end=("other_end", "any"), finishes=("finish", "sum"),
        last_ev=("ev", "last")).reset_index()
    per["reason"] = np.select(
        [per["open"], per["other_end"], per["finishes"] > (per["last_ev"] == 4).astype(int)],
        ["outside_window_or_running", "evicted_killed_or_lost", "finished_then_rerun"], "replayed")
    reasons = per.groupby("reason").size().rename("tasks").reset_index()
    return per.loc[per.reason == "replayed", ["job_id", "task_id"]].reset_index(drop=True), reasons


def attempt_lists(attempts: pd.DataFrame, keys: pd.DataFrame) -> dict:
    """Per task of ``keys`` (replayable): its attempts in order as ``Attempt`` (gap = the
    trace's delay between the previous attempt's end and this one's start)."""
    a = attempts.merge(keys, on=["job_id", "task_id"]).sort_values(["job_id", "task_id", "attempt"])
    lists = {}
    for key, g in a.groupby(["job_id", "task_id"], sort=False):
        start = g["start_us"].to_numpy(dtype=float) / 1e6
        end = g["end_us"].to_numpy(dtype=float) / 1e6
        gaps = np.concatenate([[0.0], np.maximum(start[1:] - end[:-1], 0.0)])
        lists[key] = [Attempt(float(d), bool(e == 3), float(gp))
                      for d, e, gp in zip(g["duration_s"].to_numpy(dtype=float), g["end_event"].to_numpy(), gaps)]
    return lists


def evaluate_cloning(lists: dict, scores: dict, thresholds, clone_counts, retries: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (threshold, clones, task): completion relative to the trace; Table V overheads."""
    rows = []
    for thr in thresholds:
        for k in clone_counts:
            for key, att in lists.items():
                t0, w0 = original(att)
                t1, w1 = replay(att, scores.get(key, []), thr, retries, k)
                rows.append((thr, k, key[0], key[1], any(a.failed for a in att), att[-1].failed, t0, t1, w0, w1))
    df = pd.DataFrame(rows, columns=["threshold", "clones", "job_id", "task_id", "had_failed_attempt",
                                     "final_failed", "original_s", "replay_s", "original_work_s", "replay_work_s"])
    df["relative_completion"] = np.where(df.original_s > 0, df.replay_s / df.original_s.where(df.original_s > 0), 1.0)
    g = df.groupby(["threshold", "clones"])
    overhead = (g["replay_work_s"].sum() / g["original_work_s"].sum() - 1).rename("overhead").reset_index()
    return df, overhead
