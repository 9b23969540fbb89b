from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass

import pytest

from galley_core.config import (
    Config,
    ConfigError,
    add_arguments,
    config_from_arguments,
    config_from_values,
    describe_fields,
    param,
    sub_config,
)


@dataclass(frozen=True)
class Example(Config):
    rate_hz: float = param(10.0, "loop rate", unit="Hz", gt=0.0)
    count: int = param(3, "how many", ge=1, le=5)
    mode: str = param("fast", "speed mode", choices=("fast", "slow"))
    gains: tuple[float, ...] = param((1.0, 2.0), "per-axis gains", ge=0.0)
    enabled: bool = param(True, "whether it runs")
    offset_m: float = param(0.0, "any offset", unit="m")


def test_defaults_are_valid_and_described():
    cfg = Example()
    assert cfg.rate_hz == 10.0
    infos = {i.name: i for i in describe_fields(Example)}
    assert infos["rate_hz"].description() == "loop rate; allowed: > 0 (Hz)"
    assert infos["offset_m"].description() == "any offset (m)"
    assert infos["gains"].is_array and infos["gains"].scalar_type is float


@pytest.mark.parametrize(
    ("values", "field", "allowed"),
    [
        ({"rate_hz": 0.0}, "rate_hz", "> 0"),
        ({"rate_hz": math.nan}, "rate_hz", "> 0"),
        ({"count": 6}, "count", "<= 5"),
        ({"mode": "warp"}, "mode", "one of 'fast', 'slow'"),
        ({"gains": [1.0, -2.0]}, "gains", ">= 0"),
        ({"offset_m": math.inf}, "offset_m", "a finite number"),
        ({"count": 2.5}, "count", "an integer"),
        ({"count": True}, "count", "an integer"),
        ({"enabled": "yes"}, "enabled", "a boolean"),
        ({"rate_hz": "10"}, "rate_hz", "a number"),
        ({"gains": "1,2"}, "gains", "a list of float"),
    ],
)
def test_bad_values_name_the_field_and_what_is_allowed(values, field, allowed):
    with pytest.raises(ConfigError) as err:
        config_from_values(Example, values)
    assert err.value.field == field
    assert allowed in err.value.allowed
    assert field in str(err.value)


def test_integers_are_accepted_for_floats_and_lists_become_tuples():
    cfg = config_from_values(Example, {"rate_hz": 5, "gains": [1, 2, 3]})
    assert cfg.rate_hz == 5.0 and isinstance(cfg.rate_hz, float)
    assert cfg.gains == (1.0, 2.0, 3.0)


def test_unknown_name_suggests_close_matches():
    with pytest.raises(ConfigError) as err:
        config_from_values(Example, {"rate": 1.0})
    assert "did you mean rate_hz" in err.value.allowed


def test_update_from_a_base_keeps_other_values():
    base = config_from_values(Example, {"count": 4})
    updated = config_from_values(Example, {"mode": "slow"}, base=base)
    assert (updated.count, updated.mode) == (4, "slow")


def test_direct_construction_is_validated_too():
    with pytest.raises(ConfigError, match="rate_hz"):
        Example(rate_hz=-1.0)


@dataclass(frozen=True)
class ExampleNodeConfig(Example):
    frame: str = param("map", "a field of the node, not of the algorithm")


@dataclass(frozen=True)
class Other(Config):
    other_m: float = param(1.0, "a field the node config lacks", unit="m")


def test_sub_config_takes_the_part_with_the_node_values():
    node = ExampleNodeConfig(count=5, mode="slow", gains=(3.0,), frame="odom")
    part = sub_config(Example, node)
    assert type(part) is Example
    assert part == Example(count=5, mode="slow", gains=(3.0,))


def test_sub_config_of_a_config_without_the_fields_names_the_missing_one():
    with pytest.raises(AttributeError, match="other_m"):
        sub_config(Other, Example())


# --- the command line built from a Config's fields -------------------------------------------------


@dataclass(frozen=True)
class _CliConfig(Config):
    steps: int = param(2000, "gradient steps", ge=1)
    lr: float = param(1e-4, "learning rate", gt=0.0, unit="1/step")
    schedule: str = param("constant", "rate schedule", choices=("constant", "cosine"))
    cameras: tuple[str, ...] = param(("base", "wrist"), "cameras read")
    ema: bool = param(True, "keep an EMA of the weights")


def _cli_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="galley test", exit_on_error=False)
    add_arguments(parser, _CliConfig, aliases={"steps": ["-n"]})
    return parser


def test_options_come_from_the_fields_with_their_doc_bounds_unit_and_default():
    text = _cli_parser().format_help()
    assert "--steps STEPS, -n STEPS" in text
    assert "gradient steps; >= 1 (default: 2000)" in text
    assert "learning rate; > 0 (1/step) (default: 0.0001)" in text
    assert "--schedule {constant,cosine}" in text
    assert "--ema, --no-ema" in text


def test_only_given_options_override_the_defaults():
    args = _cli_parser().parse_args(["-n", "5", "--cameras", "base", "--no-ema"])
    config = config_from_arguments(_CliConfig, args)
    assert config == _CliConfig(steps=5, cameras=("base",), ema=False)
    assert config_from_arguments(_CliConfig, _cli_parser().parse_args([]), lr=0.5) == _CliConfig(lr=0.5)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "0 is not allowed: >= 1"),
        (["--lr", "nan"], "nan is not allowed: > 0 (1/step)"),
        (["--steps", "many"], "'many' is not an integer"),
    ],
)
def test_a_value_outside_the_field_is_refused_by_the_parser(argv, message):
    with pytest.raises(argparse.ArgumentError, match=re.escape(message)):
        _cli_parser().parse_args(argv)
