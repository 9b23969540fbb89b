"""DART-style spells of noise (galley_core.perturbation)."""

from __future__ import annotations

import numpy as np
import pytest

from galley_core.perturbation import SpellNoise, SpellNoiseConfig


def _trace(config: SpellNoiseConfig, seconds: float = 600.0) -> np.ndarray:
    noise = SpellNoise(config, joints=6)
    return np.array([[*noise.at(t)[:2], *noise.at(t)[2]] for t in np.arange(0.0, seconds, 0.1)])


def test_no_scale_no_noise() -> None:
    assert not _trace(SpellNoiseConfig(scale=0.0)).any()


def test_spells_hold_one_offset_and_fill_their_share_of_time() -> None:
    config = SpellNoiseConfig(scale=1.0, spell_s=1.0, gap_s=3.0, seed=4)
    trace = _trace(config)
    on = np.abs(trace).sum(axis=1) > 0
    assert 0.15 < on.mean() < 0.35  # spell / (spell + mean gap) = 0.25
    starts = np.flatnonzero(np.diff(on.astype(int)) == 1) + 1
    assert len(starts) > 100
    for s in starts[:20]:
        np.testing.assert_array_equal(trace[s], trace[s + 9])  # held through the 1 s spell
    # standard deviations as configured, per channel
    stds = trace[on].std(axis=0)
    assert stds[0] == pytest.approx(0.06, rel=0.3) and stds[1] == pytest.approx(0.35, rel=0.3)
    assert stds[2:] == pytest.approx(np.full(6, 0.08), rel=0.3)
    doubled = _trace(SpellNoiseConfig(scale=2.0, spell_s=1.0, gap_s=3.0, seed=4))
    np.testing.assert_allclose(doubled, 2.0 * trace)  # the same spells, twice the size


def test_same_seed_same_noise_and_bad_sizes_are_named() -> None:
    config = SpellNoiseConfig(scale=1.0, seed=9)
    np.testing.assert_array_equal(_trace(config, 60.0), _trace(config, 60.0))
    assert not np.array_equal(_trace(config, 60.0), _trace(SpellNoiseConfig(scale=1.0, seed=10), 60.0))
    with pytest.raises(ValueError, match="scale"):
        SpellNoiseConfig(scale=-1.0)
    with pytest.raises(ValueError, match="spell_s"):
        SpellNoiseConfig(spell_s=0.0)
