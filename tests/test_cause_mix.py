"""The generator's cause mixes: 'hound' (the embedded trace, unchanged) and 'reexecution_fit' (the variant
whose skew share is fitted to the real re-executions; docs/SYNTHETIC_TRACE.md, "Cause mixes")."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import numpy as np
import pytest

from stragglers.settings import SettingError, Settings
from stragglers.traces.fetch import SyntheticScale, source_version
from stragglers.traces.synth import GENERATOR_VERSION, generate_google
from stragglers.traces.synth.formats import read_sha256sum
from stragglers.traces.synth.model import (
    CAUSE_MIXES, HOUND_COVERAGE, HOUND_DOMINANT_COVERAGE, TRAVELLING_CAUSES, cause_mix_coverages,
    draw_job_causes,
)

SMALL = dict(seed=7, n_jobs=16, max_tasks=400, n_parts=2, n_machines=120)


def test_the_variant_keeps_a_tenth_of_the_skew_and_gives_the_rest_to_the_others_in_hounds_proportions():
    # the numbers docs/SYNTHETIC_TRACE.md ("Cause mixes") and docs/EVALUATION.md give
    assert CAUSE_MIXES == {"hound": 1.0, "reexecution_fit": 0.1}
    assert cause_mix_coverages(CAUSE_MIXES["hound"]) == (HOUND_COVERAGE, HOUND_DOMINANT_COVERAGE)
    coverage, dominant = cause_mix_coverages(CAUSE_MIXES["reexecution_fit"])
    for cause in HOUND_COVERAGE:
        k = 0.1 if cause in TRAVELLING_CAUSES else 1.0
        assert coverage[cause] == pytest.approx(k * HOUND_COVERAGE[cause])
        assert dominant[cause] == pytest.approx(k * HOUND_DOMINANT_COVERAGE[cause])
    # drawn: data skew is the dominant cause of 0.055 / 0.402 = 13.7% of jobs (55% with Hound's mix),
    # and the other causes keep their published proportions among themselves
    n = 20_000
    for share, data_skew in ((1.0, 0.550 / 0.922), (0.1, 0.055 / 0.4018)):
        rng = np.random.default_rng(5)
        first = Counter(draw_job_causes(rng, skew_share=share).names[0] for _ in range(n))
        assert first["data_skew"] / n == pytest.approx(data_skew, abs=0.012)
        others = {c: first[c] for c in HOUND_DOMINANT_COVERAGE if c not in TRAVELLING_CAUSES}
        total = sum(HOUND_DOMINANT_COVERAGE[c] for c in others)
        for c, count in others.items():
            assert count / sum(others.values()) == pytest.approx(HOUND_DOMINANT_COVERAGE[c] / total, abs=0.015), c


def _sha256sum(root) -> dict:
    return read_sha256sum(root)


def test_a_generated_variant_moves_only_the_causes_and_the_default_stays_as_it_was(tmp_path):
    default = generate_google(tmp_path / "default", truth_dir=tmp_path / "t_default", **SMALL)
    named = generate_google(tmp_path / "hound", truth_dir=tmp_path / "t_hound", cause_mix="hound", **SMALL)
    variant = generate_google(tmp_path / "fit", truth_dir=tmp_path / "t_fit", cause_mix="reexecution_fit", **SMALL)
    # the default and the named default: the same bytes, and generation.json as before there were mixes
    assert _sha256sum(tmp_path / "default") == _sha256sum(tmp_path / "hound")
    params = json.loads((tmp_path / "t_default" / "generation.json").read_text())["params"]
    assert "cause_mix" not in params and "skew_share" not in params
    assert json.loads((tmp_path / "t_fit" / "generation.json").read_text())["params"]["cause_mix"] == "reexecution_fit"
    # the variant draws as many numbers as the default: same jobs, same sizes; only their causes differ
    dj, vj = default.truth_jobs.set_index("job_id"), variant.truth_jobs.set_index("job_id")
    assert list(dj.index) == list(vj.index) and (dj.n_tasks == vj.n_tasks).all()
    assert (dj.causes != vj.causes).any()
    skewed = [int(t.cause.isin(TRAVELLING_CAUSES).sum()) for t in (default.truth_tasks, variant.truth_tasks)]
    assert skewed[1] < skewed[0], skewed
    assert named.truth_tasks.equals(default.truth_tasks)


def test_the_setting_reaches_the_generator_and_the_default_keeps_its_version(tmp_path):
    assert Settings().synthetic_cause_mix == "hound"
    assert Settings.from_env({"NURD_SYNTHETIC_CAUSE_MIX": "reexecution_fit"}).synthetic_cause_mix == "reexecution_fit"
    with pytest.raises(SettingError, match="NURD_SYNTHETIC_CAUSE_MIX='skew' is invalid"):
        Settings.from_env({"NURD_SYNTHETIC_CAUSE_MIX": "skew"})
    with pytest.raises(ValueError, match="cause_mix='skew'"):
        generate_google(tmp_path / "bad", cause_mix="skew", **SMALL)
    # the embedded trace's version is the digest it had before there were mixes (no regeneration, no
    # stale assets); the variant's differs
    before = hashlib.sha256(b"synthetic")
    before.update(json.dumps({"generator_version": GENERATOR_VERSION, "seed": 2011, "n_jobs": 48,
                              "n_parts": 8}).encode())
    assert source_version("synthetic", tmp_path) == before.hexdigest()[:16]
    assert source_version("synthetic", tmp_path, scale=SyntheticScale(cause_mix="reexecution_fit")) != \
        before.hexdigest()[:16]


def test_switching_the_mix_regenerates_the_trace_and_the_default_is_stamped_as_before(tmp_path):
    from stragglers.traces.fetch import fetch_trace, raw_dir
    lines: list[str] = []
    stamp = raw_dir(tmp_path, "synthetic") / ".generated.json"
    fetch_trace("synthetic", tmp_path, scale=SyntheticScale(n_jobs=10, n_parts=2, cause_mix="reexecution_fit"),
                log=lines.append)
    assert json.loads(stamp.read_text())["cause_mix"] == "reexecution_fit"
    fetch_trace("synthetic", tmp_path, scale=SyntheticScale(n_jobs=10, n_parts=2), log=lines.append)
    assert "cause_mix" not in json.loads(stamp.read_text())   # a trace stamped before there were mixes is reused
    assert sum(line.startswith("generating the embedded trace") for line in lines) == 2, lines
