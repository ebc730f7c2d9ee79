"""Signed Schweizer-Wolff: the vectorized estimator vs the paper's double loop.

(a) ``signed_schweizer_wolff`` on the full grid (every task; one 2-D histogram and
two cumulative sums, O(N^2) memory-light array work); (b) the same on the
sampled grid the DP learner uses (max(50, sqrt(N)) tasks); (c) the formula of
Hound Section 3.1 written as the double loop over (i, j), each C(u_i, v_j)
counted with a vectorized comparison over k (O(N^3) work, N^2 Python steps).
(a) and (c) must agree to 1e-12; times are the best of 3 in the same process.

    python -m benchmarks.hound_ssw [--sizes 100,200,400]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from stragglers.diagnosis.learners import SignedSchweizerWolff, signed_schweizer_wolff


def ssw_double_loop(x: np.ndarray, y: np.ndarray, eps: float) -> float:
    n = len(x)
    u = np.array([(x <= x[i]).sum() / n for i in range(n)])
    v = np.array([(y <= y[j]).sum() / n for j in range(n)])
    swd = l1 = l2 = 0.0
    for i in range(n):
        for j in range(n):
            c = np.count_nonzero((x <= x[i]) & (y <= y[j])) / n
            swd += abs(c - u[i] * v[j])
            l1 += min(u[i], v[j]) - c
            l2 += c - max(u[i] + v[j] - 1, 0.0)
    swd *= 12 / (n * n - 1)
    l1, l2 = l1 / n**2, l2 / n**2
    sign = -1.0 if l1 - l2 > eps else (1.0 if l2 - l1 > eps else 0.0)
    return sign * min(swd, 1.0)


def best(fn, repeat=3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.hound_ssw")
    ap.add_argument("--sizes", default="100,200,400")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print("| N | (a) full grid ms | (b) sampled grid ms | (c) double loop ms | (c)/(a) | (c)/(b) | abs diff (a)-(c) |")
    print("|---|---|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        x = rng.normal(size=n)
        y = x + rng.normal(size=n)
        eps = 1 / (6 * math.sqrt(n - 1))
        grid = SignedSchweizerWolff().grid(n)
        a = best(lambda: signed_schweizer_wolff(x, y))
        b = best(lambda: signed_schweizer_wolff(x, y, grid=grid))
        c = best(lambda: ssw_double_loop(x, y, eps), repeat=1)
        diff = abs(signed_schweizer_wolff(x, y) - ssw_double_loop(x, y, eps))
        assert diff < 1e-12, diff
        print(f"| {n} | {a * 1e3:.2f} | {b * 1e3:.2f} | {c * 1e3:.0f} | {c / a:,.0f}x | {c / b:,.0f}x | {diff:.1e} |")


if __name__ == "__main__":
    main()
