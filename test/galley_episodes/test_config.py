"""The settings of episodes, evaluations and collections: one Config each, checked on creation."""

from __future__ import annotations

import dataclasses

import pytest

from galley_core.config import ConfigError
from galley_episodes import CollectConfig, EpisodeConfig, EvalConfig, parse_image_size


def test_the_defaults_are_todays_commands():
    assert EpisodeConfig().max_replans is None  # the params files decide
    assert EpisodeConfig(replan=2).max_replans == 2
    assert (EvalConfig().episodes, EvalConfig().split, EvalConfig().planner) == (50, "test", "gold")
    assert (CollectConfig().seed, CollectConfig().image_size, CollectConfig().camera_rate_hz) == (
        1_000_000,
        (320, 240),
        10.0,
    )


@pytest.mark.parametrize(
    ("cls", "values", "field"),
    [
        (EpisodeConfig, {"seed": -1}, "seed"),
        (EpisodeConfig, {"inject": "shake"}, "inject"),
        (EpisodeConfig, {"topdown": "never"}, "topdown"),
        (EpisodeConfig, {"replan": -2}, "replan"),
        (EvalConfig, {"mode": "both"}, "mode"),
        (EvalConfig, {"workers": 0}, "workers"),
        (CollectConfig, {"image_size": (4, 4)}, "image_size"),
        (CollectConfig, {"image_size": (64, 48, 3)}, "image_size"),
        (CollectConfig, {"perturb": -0.5}, "perturb"),
    ],
)
def test_a_value_out_of_bounds_is_refused_by_name(cls, values, field):
    with pytest.raises(ConfigError) as err:
        cls(**values)
    assert err.value.field == field


def test_a_replaced_setting_is_checked_too():
    with pytest.raises(ConfigError, match="seed"):
        dataclasses.replace(EpisodeConfig(), seed=-3)


def test_image_sizes_read_as_width_by_height():
    assert parse_image_size(" 96x72 ") == (96, 72) and parse_image_size("32X24") == (32, 24)
    with pytest.raises(ValueError, match="is not WxH"):
        parse_image_size("96")
