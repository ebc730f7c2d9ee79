"""Hound's metrics (Table 2), words (Algorithm 3) and named causes (Table 4).

One place for: which ``hound_inputs`` column is which Hound metric, the
vocabulary K(+)/K(-), and which words make which named cause.
"""

from __future__ import annotations

import numpy as np

from stragglers.traces.synth.model import CAUSES

# hound_inputs column -> Hound Table 2 metric name (MACHINE_CPU/RAM: not staged)
METRICS: dict[str, str] = {
    "mean_cpu": "MEAN_CPU", "peak_cpu": "PEAK_CPU", "mean_mem": "MEAN_MEM", "peak_mem": "PEAK_MEM",
    "mem_assign": "MEM_ASSIGN", "page_cache": "PAGE_CACHE", "page_cache_um": "PAGE_CACHE_UM",
    "mean_io": "MEAN_IO", "peak_io": "PEAK_IO", "disk_space": "DISK_SPACE", "cpi": "CPI",
    "cache_miss": "CACHE_MISS", "sched_delay": "SCHED_DELAY", "evict": "EVICT", "fail": "FAIL",
    "priority": "PRIORITY", "req_cpu": "REQ_CPU", "req_mem": "REQ_MEM", "req_disk": "REQ_DISK",
}
METRIC_COLUMNS: tuple[str, ...] = tuple(METRICS)
# Algorithm 3: every metric K_i gives two anomalous words K_i(+), K_i(-)
WORDS: tuple[str, ...] = tuple(f"{METRICS[c]}({s})" for c in METRIC_COLUMNS for s in "+-")

# Hound Table 4: the keywords of the ensemble topics behind each named cause
# (E0-E2 data skew, E3 computation skew, E4 I/O skew, E5 limited processor,
# E6 limited memory (with Table 15's D7 for the memory-side words), E7/E8
# limited I/O, E9 cache misses, E10 queueing delay, E11 eviction).
CAUSE_WORDS: dict[str, tuple[str, ...]] = {
    "data_skew": ("MEM_ASSIGN(+)", "MEAN_MEM(+)", "PEAK_MEM(+)", "PAGE_CACHE(+)", "PAGE_CACHE_UM(+)",
                  "DISK_SPACE(+)"),
    "computation_skew": ("MEAN_CPU(+)", "PEAK_CPU(+)"),
    "io_skew": ("MEAN_IO(+)", "PEAK_IO(+)"),
    "limited_processor": ("MEAN_CPU(-)", "PEAK_CPU(-)"),
    "limited_memory": ("MEAN_MEM(-)", "PEAK_MEM(-)", "MEM_ASSIGN(-)", "PAGE_CACHE(-)", "PAGE_CACHE_UM(-)"),
    "limited_io": ("MEAN_IO(-)", "PEAK_IO(-)"),
    "cache_misses": ("CACHE_MISS(+)", "CPI(+)"),
    "queueing_delay": ("SCHED_DELAY(+)",),
    "eviction": ("EVICT(+)",),
}
assert set(CAUSE_WORDS) == set(CAUSES), "the named causes are the generator's causes (Hound Table 7)"
WORD_CAUSE: dict[str, str] = {w: c for c, ws in CAUSE_WORDS.items() for w in ws}
NAME_SHARE = 0.5   # a topic is named when one cause's words hold more than this share of its weight


def words_of(profile: np.ndarray) -> np.ndarray:
    """Algorithm 3 step 2(a): a causality profile (length P) -> word probabilities (length 2P):
    Pr{K_j(+)} = |C_j| if C_j > 0, Pr{K_j(-)} = |C_j| if C_j < 0, else 0."""
    p = np.asarray(profile, dtype=float)
    out = np.zeros(2 * len(p))
    out[0::2] = np.where(p > 0, p, 0.0)
    out[1::2] = np.where(p < 0, -p, 0.0)
    return out


def keywords(topic: np.ndarray, min_weight: float = 0.0) -> list[tuple[str, float]]:
    """A topic's words by decreasing weight."""
    order = np.argsort(-topic, kind="stable")
    return [(WORDS[i], float(topic[i])) for i in order if topic[i] > min_weight]


def topic_label(topic: np.ndarray) -> str:
    return ", ".join(f"{w} {v:.2f}" for w, v in keywords(topic))


def name_topic(topic: np.ndarray) -> str | None:
    """The named cause (Table 4) whose keywords hold most of the topic's weight,
    if more than ``NAME_SHARE`` of it (a majority); None = the topic stays as its keywords."""
    share = {c: sum(float(topic[WORDS.index(w)]) for w in ws) for c, ws in CAUSE_WORDS.items()}
    best = max(share, key=lambda c: (share[c], -CAUSES.index(c)))
    total = float(np.sum(topic))
    return best if total > 0 and share[best] / total > NAME_SHARE else None
