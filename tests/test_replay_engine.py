"""The one replay engine (stragglers/prediction/engine): what a copy costs and buys, worked by hand on
jobs of a few tasks, under every cap (none, Hadoop's, a budget) and placement (machines always free,
a pool of m machines, a Spark application's executors); the oracle; what the scheduler knows at each
check (``CheckState``); the engine against the simulators it replaced on random jobs; and the cap
binding on generated jobs.

The budget's cases set what the scheduler knows at each check (the budget's base, a copy's expected
cost) by hand (``hand_state``), so that the room and the leases are whole numbers; ``CheckState.of``,
which computes them from the job, is checked on its own below."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from stragglers.prediction.copies.completion import decision_points
from stragglers.prediction.engine.caps import Budget, HadoopCaps, Uncapped, cap_from_label
from stragglers.prediction.engine.job import CheckState, CopyJob, ExecutorSlots, completion_time
from stragglers.prediction.engine.policies import Policy, from_flags, oracle, spark_rule_policies
from stragglers.prediction.engine.replay import MachinePool, copy_log, outcomes, replay_all, run
from stragglers.prediction.engine.draws import copy_draws
from stragglers.prediction.statistics.threshold import copy_cost_curve, lognormal_fit, online_threshold
from stragglers.prediction.verdicts.tuning import BUDGETS

nan, inf = np.nan, np.inf
UNCAPPED = Uncapped()


def hand_job(start, latency, checks, copies, finished=None, slots=None) -> CopyJob:
    """A job of len(latency) tasks (ids 0..n-1) with one draw of copy latencies."""
    n = len(latency)
    return CopyJob("hand", 1, np.arange(n), np.asarray(start, float), np.asarray(latency, float),
                   np.ones(n, bool) if finished is None else np.asarray(finished, bool),
                   np.asarray(checks, float), (np.asarray(copies, float),), slots)


def ranking(times, *orders, n: int) -> Policy:
    """A policy that ranks ``orders[v]`` (task indices, best first) from ``times[v]`` on."""
    ptr = np.r_[0, np.cumsum([len(o) for o in orders])].astype(np.int64)
    flagged = np.full(n, nan)
    for t, o in zip(times, orders):
        for i in o:
            flagged[i] = min(flagged[i], t) if not np.isnan(flagged[i]) else t
    order = np.concatenate([np.asarray(o, np.int64) for o in orders]) if orders else np.zeros(0, np.int64)
    return Policy("hand", "default", np.asarray(times, float), ptr, order, flagged)


def hand_state(job: CopyJob, base, cost_elapsed=(0.0, 1e6), cost=None, estimate=0) -> CopyJob:
    """``job`` with what the scheduler knows at each check set by hand: the budget's base (one value,
    or one per check) and one curve of a copy's expected machine time against its task's elapsed time
    (``cost``; default: 0 everywhere); ``estimate`` (one value, or one per check) -1: no duration known
    yet."""
    K = len(job.checks)
    running = np.array([int(((job.start <= t) & (job.end > t)).sum()) for t in job.checks])
    curve = np.zeros(len(cost_elapsed)) if cost is None else np.asarray(cost, float)
    job.__dict__["state"] = CheckState(running, np.zeros(K), np.ones(K), np.broadcast_to(np.asarray(base, float), (K,)),
                                       np.broadcast_to(np.asarray(estimate, np.int64), (K,)), np.asarray([cost_elapsed], float),
                                       curve[None, :])
    return job


def raw(job, policy, cap=UNCAPPED, pool=None) -> tuple[float, float, int]:
    """(new completion, extra machine seconds, copies) of the job's one draw."""
    out, _, _ = run(job, policy, [cap], pool)
    return float(out[0, 0, 0]), float(out[0, 0, 1]), int(out[0, 0, 2])


# ----------------------------------------------------------------------------- a copy, uncapped

def test_a_copy_that_wins_ends_the_task_early_and_costs_the_time_both_ran():
    # task 1 (100 s) flagged at 20 s, its copy runs 30 s: done at 50 s; both ran 20..50 s
    job = hand_job([0, 0], [10, 100], [20], [10, 30])
    policy = from_flags("m", "default", np.array([nan, 20.0]), job.checks)
    assert raw(job, policy) == (50.0, 30.0, 1)
    (o,) = outcomes(job, policy, [UNCAPPED])
    assert (o.jct_reduction, o.extra_machine_share, o.copies) == (pytest.approx(0.5), pytest.approx(30 / 110), 1.0)


def test_a_copy_that_loses_changes_nothing_but_costs_until_the_original_ends():
    # a copy of 90 s from 20 s would end at 110 s: the original ends first at 100 s; both ran 20..100 s
    job = hand_job([0, 0], [10, 100], [20], [10, 90])
    assert raw(job, from_flags("m", "default", np.array([nan, 20.0]), job.checks)) == (100.0, 80.0, 1)


def test_a_copy_of_a_task_that_never_finishes_buys_nothing_and_runs_until_its_original_ends():
    # task 2 is killed at 80 s (it does not finish): its copy never finishes (+inf, the copy model)
    # and the job completes at its last finishing task (100 s), not at the kill
    job = hand_job([0, 0, 0], [10, 100, 80], [20], [10, 10, inf], finished=[True, True, False])
    assert job.completion == 100.0
    assert raw(job, from_flags("m", "default", np.array([nan, nan, 20.0]), job.checks)) == (100.0, 60.0, 1)
    # a job none of whose tasks finishes completes at its last end, which no copy moves
    assert completion_time(np.array([10.0, 100.0, 150.0]), np.zeros(3, bool)) == 150.0


def test_uncapped_every_ranked_running_uncopied_task_is_copied_at_each_check_and_a_pending_one_is_not():
    # checks at 10 and 20; from 10 the policy ranks tasks 0..3; task 0 ended at 5 (no copy), task 3
    # starts at 15 (pending at 10: no copy then, one at 20); from 20 it also ranks task 4 (copied
    # then); task 1, copied at 10, is not copied again
    job = hand_job([0, 0, 0, 15, 0], [5, 40, 50, 40, 60], [10, 20], [1, 1, 1, 1, 1])
    policy = ranking([10, 20], [0, 1, 2, 3], [0, 1, 2, 3, 4], n=5)
    log = copy_log(job, policy, UNCAPPED)
    np.testing.assert_array_equal(log.start, [nan, 10, 10, 20, 20])
    assert (log.executor == -1).all()
    # each copy wins (1 s): tasks end at 5, 11, 11, 21, 21
    assert raw(job, policy) == (21.0, 4.0, 4)


# ----------------------------------------------------------------------------- Hadoop's caps

def test_hadoops_caps_allow_max_of_ten_a_tenth_of_the_running_and_a_hundredth_of_all_copies_at_once():
    checks = [5.0, 50.0]
    # 30 tasks running: max(10, 3, 0.3) = 10 copies at once; copies of 10 s end by 50, so ten more then
    job = hand_job(np.zeros(30), np.full(30, 100.0), checks, np.full(30, 10.0))
    everyone = ranking([5.0], list(range(30)), n=30)
    log = copy_log(job, everyone, HadoopCaps())
    np.testing.assert_array_equal(log.start, np.r_[np.full(10, 5.0), np.full(10, 50.0), np.full(10, nan)])
    # copies of 60 s still run at 50: no room for another
    slow = hand_job(np.zeros(30), np.full(30, 100.0), checks, np.full(30, 60.0))
    assert raw(slow, everyone, HadoopCaps())[2] == 10
    # 250 running: a tenth of them, 25
    job = hand_job(np.zeros(250), np.full(250, 100.0), [5.0], np.full(250, 10.0))
    assert raw(job, ranking([5.0], list(range(250)), n=250), HadoopCaps())[2] == 25
    # 1600 tasks of which 120 run at 5 s (the rest start later): max(10, 12, 16) = 16
    start = np.r_[np.zeros(120), np.full(1480, 500.0)]
    job = hand_job(start, np.full(1600, 100.0), [5.0], np.full(1600, 10.0))
    assert raw(job, ranking([5.0], list(range(1600)), n=1600), HadoopCaps())[2] == 16


# ----------------------------------------------------------------------------- a pool of machines

def test_a_copy_waits_for_an_idle_machine_of_the_pool():
    # 2 machines, 2 tasks: no idle machine at the flag (20 s); task 0 ends at 30 s, so the copy starts at
    # the next check, 40 s, and wins: min(100, 40 + 30) = 70; extra 70 - 40
    job = hand_job([0, 0], [30, 100], [10, 20, 40], [1, 30])
    policy = from_flags("m", "default", np.array([nan, 20.0]), job.checks)
    assert raw(job, policy, pool=MachinePool(2)) == (70.0, 30.0, 1)
    # a third machine: the copy starts at the flag, as on machines always free
    assert raw(job, policy, pool=MachinePool(3)) == (50.0, 30.0, 1) == raw(job, policy)
    # no check after the flag: the scheduler acts again at the completion that frees a machine (30 s)
    late = hand_job([0, 0], [30, 100], [10, 20], [1, 30])
    assert raw(late, from_flags("m", "default", np.array([nan, 20.0]), late.checks), pool=MachinePool(2)) == \
        (60.0, 30.0, 1)


def test_a_pool_gains_a_machine_per_completion_and_two_when_the_task_had_a_copy():
    # 4 machines, 4 tasks: none idle at 5. Task 0 ends at 10: one machine at 12, the copy of task 1
    # (ranked first) starts and ends at 15, with its task: two machines back (original and copy), so
    # at 20 both tasks 2 and 3 get a copy
    job = hand_job(np.zeros(4), [10, 100, 100, 100], [5, 12, 20], [1, 3, 3, 3])
    policy = ranking([5.0], [1, 2, 3], n=4)
    np.testing.assert_array_equal(copy_log(job, policy, UNCAPPED).start, [nan, 5, 5, 5])   # no pool: all at 5
    _, starts, _ = run(job, policy, [UNCAPPED], MachinePool(4))
    np.testing.assert_array_equal(starts[0, 0], [nan, 12, 20, 20])
    # five machines: one idle from the start, so task 1's copy starts at 5 and ends at 8 with its task;
    # at 12 three are idle (one, plus task 0's, plus task 1's two, less the copy's): tasks 2 and 3
    _, starts, _ = run(job, policy, [UNCAPPED], MachinePool(5))
    np.testing.assert_array_equal(starts[0, 0], [nan, 5, 12, 12])


# ----------------------------------------------------------------------------- Spark's executors

def test_a_spark_copy_waits_for_no_pending_task_and_a_free_core_of_another_host():
    # four tasks of 100 s, tasks 0 and 1 on host 0, tasks 2 and 3 on host 1; three executors on hosts
    # 0, 1, 2; checks at 10, 20, 30; the stage launches its last task at 15 (no copy at 10)
    free = np.array([[4, 4, 4],      # at 10: pending tasks, no copy whatever is free
                     [3, 1, 1],      # at 20
                     [3, 0, 0]])     # at 30
    slots = ExecutorSlots(np.array([0, 1, 2]), free, np.array([0, 0, 1, 1]), no_pending_from=15.0)
    job = hand_job(np.zeros(4), np.full(4, 100.0), [10, 20, 30], np.full(4, 50.0), slots=slots)
    log = copy_log(job, ranking([10.0], [0, 1, 2, 3], n=4), UNCAPPED)
    # at 20: task 0 (host 0) takes executor 1's one core, task 1 (host 0) executor 2's; tasks 2 and 3
    # (host 1) take two of executor 0's three (host 0): never a core of their own host
    np.testing.assert_array_equal(log.start, [20, 20, 20, 20])
    np.testing.assert_array_equal(log.executor, [1, 2, 0, 0])
    assert (slots.executor_host[log.executor] != slots.task_host).all()

    # tasks 2 and 3 run on host 1: executor 1's free cores are of no use to them. At 20 executor 2
    # has one free core: task 2's copy takes it, task 3 waits; at 30 the log shows two free there, one
    # of which task 2's copy holds: task 3 gets the other
    free = np.array([[0, 0, 0],
                     [0, 2, 1],
                     [0, 2, 2]])
    slots = ExecutorSlots(np.array([0, 1, 2]), free, np.array([0, 0, 1, 1]), no_pending_from=0.0)
    job = hand_job(np.zeros(4), np.full(4, 100.0), [10, 20, 30], np.full(4, 50.0), slots=slots)
    log = copy_log(job, ranking([10.0], [2, 3], n=4), UNCAPPED)
    np.testing.assert_array_equal(log.start, [nan, nan, 20, 30])
    np.testing.assert_array_equal(log.executor, [-1, -1, 2, 2])
    # on machines always free (a pool, or no slots) the same policy copies both at 20
    assert raw(hand_job(np.zeros(4), np.full(4, 100.0), [10, 20, 30], np.full(4, 50.0)),
               ranking([10.0], [2, 3], n=4))[2] == 2


# ----------------------------------------------------------------------------- a budget

def test_a_budget_copies_the_ranked_tasks_in_order_while_the_room_holds_each_expected_cost():
    # room 0.1 x 100 = 10 s; each copy is expected to cost 4 s: the first two ranked (8 s) fit, the
    # third (12 s) does not, nor any after it. The two share the room as leases of 10 x 4/8 = 5 s:
    # task 1's copy (3 s) wins at 8 and gives 2 s back; task 2's (7 s) is killed at its lease (10 s),
    # having cost 5 s, and task 2 goes on with its original (30 s)
    job = hand_state(hand_job(np.zeros(5), [1, 20, 30, 40, 50], [5], [1, 3, 7, 2, 2]), base=100.0,
                     cost=(4.0, 4.0))
    policy = ranking([5.0], [1, 2, 3, 4], n=5)
    assert raw(job, policy, Budget(0.1)) == (50.0, 3.0 + 5.0, 2)
    np.testing.assert_array_equal(copy_log(job, policy, Budget(0.1)).start, [nan, 5, 5, nan, nan])
    # the order is the policy's: ranked 4, 3 first, those two are copied and win (2 s each)
    assert raw(job, ranking([5.0], [4, 3, 2, 1], n=5), Budget(0.1)) == (30.0, 4.0, 2)
    # a room that holds no copy's cost: nothing
    assert raw(job, policy, Budget(0.03)) == (50.0, 0.0, 0)


def test_leases_share_the_room_in_proportion_to_the_copies_costs():
    # the expected cost is the task's elapsed time here; at 20: task 0 has run 10 s, task 1 15 s, so
    # 25 s of a room of 30 s: leases 30 x 10/25 = 12 s and 30 x 15/25 = 18 s. Task 0's copy (12 s)
    # ends within its lease and wins; task 1's (18.5 s) is killed at 18 s
    job = hand_state(hand_job([10, 5], [100, 100], [20], [12, 18.5]), base=300.0, cost_elapsed=(0.0, 100.0),
                     cost=(0.0, 100.0))
    new, extra, copies = raw(job, ranking([20.0], [0, 1], n=2), Budget(0.1))
    assert (new, copies) == (105.0, 2) and extra == pytest.approx(12.0 + 18.0)
    # with no estimate of the durations yet there is no cost to weigh: no copy
    job = hand_state(hand_job([10, 5], [100, 100], [20], [12, 18.5]), base=300.0, estimate=-1)
    assert raw(job, ranking([20.0], [0, 1], n=2), Budget(0.1)) == (110.0, 0.0, 0)


def test_a_task_refused_for_want_of_room_is_copied_at_a_later_check_when_a_copy_gives_its_lease_back():
    # room 10 s at each check (0.1 x 100), each copy expected to cost 6 s. At 5 the policy ranks
    # task 3, then 2, then 1: task 3 fits (6 s) and holds the whole room as its lease; task 2 (12 s)
    # is refused. Task 3's copy runs 2 s: at 10 it holds only what it ran, so 8 s are free and task 2
    # is asked again and copied (its lease 8 s); task 1 (6 + 6 > 8) still is not
    start, latency, checks = np.zeros(4), [1, 20, 30, 40], [5, 10]
    policy = ranking([5.0], [3, 2, 1], n=4)
    job = hand_state(hand_job(start, latency, checks, [1, 2, 2, 2]), base=100.0, cost=(6.0, 6.0))
    np.testing.assert_array_equal(copy_log(job, policy, Budget(0.1)).start, [nan, nan, 10, 5])
    assert raw(job, policy, Budget(0.1)) == (20.0, 4.0, 2)
    # a copy that runs its whole lease (killed at 15) holds it at 10: no room, task 2 is never copied
    job = hand_state(hand_job(start, latency, checks, [1, 2, 2, 12]), base=100.0, cost=(6.0, 6.0))
    np.testing.assert_array_equal(copy_log(job, policy, Budget(0.1)).start, [nan, nan, nan, 5])
    assert raw(job, policy, Budget(0.1)) == (40.0, 10.0, 1)
    # the room is the budget's base at the check: a base that grows to 220 at 10 makes room for two
    # more (22 - 10 held = 12 = 6 + 6)
    job = hand_state(hand_job(start, latency, checks, [1, 2, 2, 12]), base=[100.0, 220.0], cost=(6.0, 6.0))
    np.testing.assert_array_equal(copy_log(job, policy, Budget(0.1)).start, [nan, 10, 10, 5])


def test_the_oracle_copies_where_its_copy_wins_in_order_of_true_end_on_leases_of_exactly_the_run():
    # tasks end at 2, 10, 20, 30, 40 (the last one is killed: never copied); copies from 4 would end
    # at 5, 7, 29 (after its original: not copied), 9 and never
    job = hand_job(np.zeros(5), [2, 10, 20, 30, 40], [4], [1, 3, 25, 5, inf],
                   finished=[True, True, True, True, False])
    o = oracle(job)
    assert o.order.tolist() == [3, 2, 1, 0] and o.knows_copies
    # uncapped: every finishing task its copy beats
    np.testing.assert_array_equal(copy_log(job, o, UNCAPPED).start, [nan, 4, nan, 4, nan])
    assert raw(job, o) == (20.0, 3.0 + 5.0, 2)
    # a room of 7 s holds task 3's run (5 s), not task 1's after it (5 + 3 > 7); a room of 8 s both,
    # each leased exactly its run (no copy killed, nothing spent beyond the runs)
    hand_state(job, base=100.0, estimate=-1)       # the oracle needs no estimate: it knows its copies
    assert raw(job, o, Budget(0.07)) == (20.0, 5.0, 1)
    assert raw(job, o, Budget(0.08)) == (20.0, 8.0, 2)
    # a policy that ranks as the oracle but does not know the copies copies task 2 too (and loses)
    same_order = ranking([4.0], [3, 2, 1, 0], n=5)
    assert raw(job, same_order) == (20.0, 5.0 + 16.0 + 3.0, 3)


def test_the_oracle_ranks_only_running_tasks_so_a_late_straggler_can_find_the_room_spent():
    """The oracle knows each copy's run, not which task will start later: on a job in two waves it
    spends the room on the first wave's tasks before the task that ends last has started, and a policy
    that waits can beat it. The headroom takes the better of the two per job for this reason
    (stragglers/prediction/verdicts/budgets.py: ``oracle_beaten_jobs``)."""
    # task 2 starts at 12 and runs 100 s: the job's end. At 5 the oracle copies task 1 (its copy ends
    # at 10 < 30), which spends 5 of the room's 10 s; at 15 task 2 runs, but its copy (8 s) does not
    # fit in the 5 s left. A policy that ranks only task 2, from 15, copies it (its expected cost, 8 s,
    # fits): task 2 ends at 23 and the job at 30, task 1's end
    job = hand_state(hand_job([0, 0, 12], [3, 30, 100], [5, 15], [1, 5, 8]), base=100.0, cost=(8.0, 8.0))
    assert raw(job, oracle(job), Budget(0.1)) == (112.0, 5.0, 1)
    assert raw(job, ranking([15.0], [2], n=3), Budget(0.1)) == (30.0, 8.0, 1)


# ----------------------------------------------------------------------------- what the scheduler knows

def test_check_state_is_what_is_known_at_each_check_re_estimated_when_a_task_finishes():
    start = np.array([0.0, 0.0, 0.0, 0.0, 2.0, 8.0])
    y = np.array([3.0, 5.0, 9.0, 30.0, 20.0, 12.0])
    fin = np.array([True, True, True, False, True, True])
    checks = np.array([2.5, 4.0, 4.5, 6.0, 10.0])
    job = CopyJob("hand", 1, np.arange(6), start, y, fin, checks, (np.ones(6),))
    st = job.state
    # running: started and not ended (task 5 from 8 s on; task 0 ends at 3, task 1 at 5, task 2 at 9)
    assert st.running.tolist() == [5, 4, 4, 3, 3]
    # machine time so far, sum of min(y, t - start): at 6 s, 3 + 5 + 6 + 6 + 4 = 24
    assert st.machine_so_far.tolist() == [2.5 * 4 + 0.5, 3 + 4 * 3 + 2, 3 + 4.5 * 2 + 4.5 + 2.5, 24.0,
                                          3 + 5 + 9 + 10 + 8 + 2]
    # nothing finished at 2.5: no estimate; task 0 at 3 (estimate 0, kept at 4.5), task 1 at 5
    # (estimate 1, kept at 6 s), task 2 at 9 (estimate 2)
    assert st.estimate.tolist() == [-1, 0, 0, 1, 2] and np.isinf(st.median[0])
    for k, e in ((1, 0), (3, 1), (4, 2)):
        t = checks[k]
        ended, runs = start + y <= t, (start <= t) & (start + y > t)
        done, elapsed = y[ended & fin], t - start[runs]
        fit = lognormal_fit(np.r_[done, elapsed], np.r_[np.ones(len(done), bool), np.zeros(len(elapsed), bool)])
        assert st.median[k] == online_threshold(done, elapsed, 0.5, fit=fit)
        mean: list[float] = []
        np.testing.assert_allclose(st.cost[e], copy_cost_curve(done, elapsed, st.cost_elapsed[e], fit=fit,
                                                               mean_out=mean))
        # the budget's base: the machine time so far, or the task count times the mean duration as
        # known, the larger
        assert st.base[k] == pytest.approx(max(st.machine_so_far[k], len(y) * mean[0]))
        # a copy is killed when its original ends: it costs no more than a fresh task, E[min(C, R)] <= E[C]
        assert (st.cost[e] >= 0).all() and (st.cost[e] <= mean[0] + 1e-9).all()
    assert st.median[2] == st.median[1] and st.base[0] == st.machine_so_far[0]


def test_cap_labels_read_back_and_a_budget_must_be_positive():
    assert cap_from_label("0.02") == Budget(0.02) and cap_from_label("hadoop") == HadoopCaps()
    assert cap_from_label("none") == UNCAPPED and Budget(0.005).label == "0.005"
    with pytest.raises(ValueError):
        Budget(0.0)
    with pytest.raises(ValueError, match="not increasing"):
        hand_job([0, 0], [1, 2], [5, 5], [1, 1])


# ----------------------------------------------------------------------------- the simulators it replaced

def random_job(rng, job_id: int, wall_clock: bool = True) -> tuple[CopyJob, np.ndarray]:
    """A job of 3-30 tasks (started at 0 or later, a tenth not finishing, copies drawn as the copy
    model draws them) and flags at times its tasks run (NaN: never), checked at a grid united with the
    flags' times (the completion tables' decision points)."""
    n = int(rng.integers(3, 31))
    start = np.where(rng.random(n) < 0.5, 0.0, np.round(rng.uniform(0, 50, n), 1)) if wall_clock else np.zeros(n)
    y = np.round(rng.lognormal(3.0, 0.8, n), 2)
    fin = rng.random(n) > 0.1
    fin[0] = True
    copies = copy_draws(y, "random", job_id, [int(rng.integers(0, 1000))], finished=fin)[0]
    f = np.where(rng.random(n) < 0.6, np.round(start + rng.uniform(0, 1, n) * y, 1), nan)
    f[f >= start + y] = nan
    grid = np.round(np.sort(rng.uniform(0, (start + y).max(), int(rng.integers(1, 8)))), 1)
    checks = decision_points(grid, f[~np.isnan(f)])
    return CopyJob("random", job_id, np.arange(n), start, y, fin, checks, (copies,)), f


def test_uncapped_on_machines_always_free_each_task_ends_at_its_original_or_flag_plus_copy():
    """The former ``speculate_unlimited``: a copy per flag at the flag, each task ending at
    min(original end, flag + copy latency) on the wall clock, the time both ran its cost."""
    rng = np.random.default_rng(0)
    for job_id in range(200):
        job, f = random_job(rng, job_id)
        c = job.copies[0]
        flagged = ~np.isnan(f)
        done = np.where(flagged, np.minimum(job.end, f + c), job.end)
        expected = (completion_time(done, job.finished), float(np.where(flagged, done - f, 0.0).sum()),
                    int(flagged.sum()))
        got = raw(job, from_flags("m", "default", f, job.checks))
        assert got == pytest.approx(expected), job_id


def speculate_on_grid(y, f, relaunch, valid, grid, pool0: int, *, after_grid: str = "event"):
    """The former FCFS simulator of copies on m machines, the reference: the body of
    ``speculate_on_grid`` in stragglers/prediction/copies/speculation.py before the engine (git show
    037eb54~1:stragglers/prediction/copies/speculation.py), with its ``completion_time`` inlined."""
    idx = np.flatnonzero(valid)
    order = idx[np.lexsort((idx, f[idx]))].tolist()     # earliest flag first, then task order
    done = y.copy()
    start = np.full(len(y), np.nan)                     # when a task's copy started
    queue: deque[int] = deque()
    nxt = 0

    def serve(c: float) -> None:
        nonlocal queue
        copied = ~np.isnan(start)
        ended = done <= c
        idle = pool0 + int(ended.sum()) + int((ended & copied).sum()) - int(copied.sum())
        while queue and idle > 0:
            i = queue.popleft()
            if y[i] <= c:                                   # its original finished while it waited
                continue
            start[i] = c
            done[i] = min(y[i], c + relaunch[i])
            idle -= 1

    for c in grid.tolist():
        while nxt < len(order) and f[order[nxt]] <= c:
            queue.append(order[nxt])
            nxt += 1
        serve(c)
    if after_grid == "event":
        c = float(grid[-1]) if len(grid) else 0.0
        while queue and any(y[i] > c for i in queue):
            later = done[done > c]
            if not len(later):
                break
            c = float(later.min())
            serve(c)
    copied = ~np.isnan(start)
    finishes = np.isfinite(np.asarray(relaunch, dtype=float))
    new = float(done[finishes].max()) if finishes.any() else float(done.max())
    return new, float((done[copied] - start[copied]).sum())


def test_a_pool_of_m_machines_is_the_former_first_come_first_served_simulator():
    rng = np.random.default_rng(1)
    compared = 0
    for job_id in range(300):
        job, f = random_job(rng, job_id)
        n, c = len(job.task_ids), job.copies[0]
        valid = ~np.isnan(f)
        policy = from_flags("m", "default", f, job.checks)
        for m in {n - 1, n, n + 2}:
            if m < 1:
                continue
            new, extra, _ = raw(job, policy, pool=MachinePool(m))
            ref = speculate_on_grid(job.end, f, c, valid, job.checks, max(0, m - n))
            assert (new, extra) == pytest.approx(ref), (job_id, m)
            compared += 1
    assert compared > 800


# ----------------------------------------------------------------------------- the cap binds

def generated_job(job_id: int, n: int = 300) -> CopyJob:
    """A job of one wave: n tasks started at 0, log-normal durations (median 33 s), a tenth killed;
    checked every 10 s from its 5% finish on; copies as the copy model draws them (3 draws)."""
    rng = np.random.default_rng([7, job_id])
    y = np.round(rng.lognormal(3.5, 0.7, n), 3)
    fin = rng.random(n) > 0.1
    t0 = np.sort(y[fin])[int(0.05 * n) - 1]
    return CopyJob("generated", job_id, np.arange(n), np.zeros(n), y, fin, np.arange(t0, y.max(), 10.0),
                   tuple(copy_draws(y, "generated", job_id, range(3), finished=fin)))


def flag_all(job: CopyJob) -> Policy:
    """Every task flagged at the first check it runs at."""
    k = np.searchsorted(job.checks, job.start, side="left")
    f = np.where(k < len(job.checks), job.checks[np.minimum(k, len(job.checks) - 1)], nan)
    return from_flags("flag_all", "default", np.where(f < job.end, f, nan), job.checks)


@pytest.fixture(scope="module")
def capped_runs():
    """Per generated job: the job and every policy's outcomes (flag-all, the oracle, Spark's rule at
    its default and every grid setting) under each budget and uncapped."""
    caps = [Budget(b) for b in BUDGETS] + [UNCAPPED]
    runs = []
    for j in range(8):
        job = generated_job(j)
        runs.append((job, replay_all(job, [flag_all(job), oracle(job), *spark_rule_policies(job)], caps)))
    return runs


def test_the_budget_binds_flag_all_spends_about_the_budget_where_uncapped_it_spends_many_times_it(capped_runs):
    uncapped = np.mean([res[0][1][-1].extra_machine_share for _, res in capped_runs])
    assert uncapped > 5 * max(BUDGETS)          # a copy of every running task: far above every budget
    spend = np.array([[o.extra_machine_share / b for o, b in zip(res[0][1], BUDGETS)] for _, res in capped_runs])
    assert ((0.7 <= spend.mean(axis=0)) & (spend.mean(axis=0) <= 1.1)).all(), spend.mean(axis=0)


def test_no_copy_outlives_the_room_a_policy_never_spends_above_the_budget_of_its_largest_base(capped_runs):
    """What the engine guarantees: the copies never hold more than share x the budget's base at a check,
    so a job's spend is at most share x its largest base. The base is an estimate (the task count
    times the mean duration as known), so this bounds the spend by the budget only as far as the
    estimate does (the next test)."""
    for job, res in capped_runs:
        largest = float(job.state.base.max()) / job.work
        for policy, outs in res:
            for o, b in zip(outs, BUDGETS):
                assert o.extra_machine_share <= b * largest + 1e-12, (job.job_id, policy.point, b)


def test_no_policy_spends_much_above_the_budget_on_a_job(capped_runs):
    worst = max(o.extra_machine_share / b for _, res in capped_runs for _, outs in res for o, b in zip(outs, BUDGETS))
    assert worst <= 1.5, worst           # 1.31 on these jobs (the oracle at 5%), where the base is 1.34 x the work


@pytest.mark.xfail(strict=True, reason="the budget's base at the first estimate (the task count times the mean of a "
                   "log-normal fitted to the first finishes, censored) can be several times a job's machine time: on "
                   "jobs of 120 tasks flag-all spends up to 2x its budget (the trade-off: job.py's module doc and "
                   "docs/EVALUATION.md, 'A cap that binds')")
def test_a_budget_is_not_overspent_by_half_on_jobs_of_a_hundred_tasks_either():
    worst = 0.0
    for j in range(8):
        job = generated_job(j, n=120)
        (_, outs), = replay_all(job, [flag_all(job)], [Budget(b) for b in BUDGETS])
        worst = max(worst, *(o.extra_machine_share / b for o, b in zip(outs, BUDGETS)))
    assert worst <= 1.5, worst


def test_on_one_wave_jobs_the_oracle_cuts_at_least_as_much_as_every_policy_under_each_budget(capped_runs):
    """On a job whose tasks all run from its first check the oracle copies the task that truly ends
    last first, whenever its run fits (no policy's copy of it can finish in a smaller lease), so no
    policy beats it; on jobs in waves it can be beaten (the oracle's late-straggler test above)."""
    beaten = []
    for job, res in capped_runs:
        assert res[1][0].method == "oracle"
        orc = res[1][1]
        for policy, outs in res:
            for o, ref, b in zip(outs, orc, BUDGETS):
                if o.jct_reduction > ref.jct_reduction + 1e-12:
                    beaten.append((job.job_id, policy.point, b))
    assert beaten == []
    # and it cuts something at every budget on most jobs
    assert np.mean([res[1][1][BUDGETS.index(0.02)].jct_reduction > 0 for _, res in capped_runs]) > 0.5


def test_identical_policies_run_once_with_identical_outcomes():
    job = generated_job(0)
    a = flag_all(job)
    b = Policy("other", "renamed", a.version_times.copy(), a.ptr.copy(), a.order.copy(), a.flagged_at.copy())
    res = replay_all(job, [a, b, oracle(job)], [Budget(0.02), UNCAPPED])
    assert a.key == b.key and a.key != oracle(job).key
    assert res[1][1] is res[0][1] and res[1][0] is b            # one run, each policy named
    assert res[0][1] == outcomes(job, b, [Budget(0.02), UNCAPPED])
    # a policy that ranks nothing costs and buys nothing, without a run
    none = Policy("none", "default", np.zeros(0), np.zeros(1, np.int64), np.zeros(0, np.int64),
                  np.full(len(job.task_ids), nan))
    assert [o.copies for o in replay_all(job, [none], [UNCAPPED])[0][1]] == [0.0]
