from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass

import pytest

from galley_core.arguments import add_arguments, config_from_arguments
from galley_core.config import Config, ConfigError, config_from_values, describe_fields, param, sub_config


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


@dataclass(frozen=True)
class _DeviceConfig(Config):
    device: str = param("auto", "torch device", pattern="auto|cpu|cuda(:[0-9]+)?")
    size: tuple[int, ...] = param((96, 72), "width, height", unit="px", ge=8)
    seed: int = param(0, "seed", ge=0)


def test_a_pattern_holds_strings_to_the_values_it_matches():
    assert _DeviceConfig(device="cuda:1").device == "cuda:1"
    with pytest.raises(ConfigError, match=re.escape("device = 'tpu' is not allowed: text matching auto|cpu")):
        _DeviceConfig(device="tpu")
    with pytest.raises(ConfigError):
        _DeviceConfig(device="cuda:1 ")  # the whole string, not a prefix
    (info,) = [i for i in describe_fields(_DeviceConfig) if i.name == "device"]
    assert info.description() == "torch device; allowed: text matching auto|cpu|cuda(:[0-9]+)?"


def _size(text: str) -> tuple[int, int]:
    width, height = text.split("x")
    return int(width), int(height)


def test_a_reader_spells_a_value_its_own_way_and_the_field_still_checks_it():
    parser = argparse.ArgumentParser(prog="galley test", exit_on_error=False)
    add_arguments(parser, _DeviceConfig, readers={"size": _size})
    assert config_from_arguments(_DeviceConfig, parser.parse_args(["--size", "32x24"])).size == (32, 24)
    with pytest.raises(argparse.ArgumentError, match=re.escape("4x4 is not allowed: >= 8 (px)")):
        parser.parse_args(["--size", "4x4"])
    with pytest.raises(argparse.ArgumentError, match="'32' is not"):
        parser.parse_args(["--size", "32"])


def test_a_command_default_of_its_own_is_shown_used_and_never_the_field_default_again():
    parser = argparse.ArgumentParser(prog="galley test", exit_on_error=False)
    add_arguments(parser, _DeviceConfig, defaults={"device": "cpu"})
    assert "(default: cpu)" in parser.format_help()
    assert config_from_arguments(_DeviceConfig, parser.parse_args([])).device == "cpu"
    assert config_from_arguments(_DeviceConfig, parser.parse_args(["--device", "cuda"])).device == "cuda"
    with pytest.raises(ConfigError, match="a default of the command's own"):
        add_arguments(argparse.ArgumentParser(), _DeviceConfig, defaults={"device": "auto"})
    with pytest.raises(ConfigError, match="text matching"):
        add_arguments(argparse.ArgumentParser(), _DeviceConfig, defaults={"device": "tpu"})
    with pytest.raises(KeyError, match="no field devices"):
        add_arguments(argparse.ArgumentParser(), _DeviceConfig, defaults={"devices": "cpu"})


@dataclass(frozen=True)
class _Trainer(Config):
    seed: int = param(1, "seed of the batches", ge=0)


def test_two_configurations_with_a_field_name_in_common_read_only_their_own_options():
    parser = argparse.ArgumentParser(prog="galley test", exit_on_error=False)
    add_arguments(parser, _Trainer)
    device_options = add_arguments(parser, _DeviceConfig, skip=("seed",))  # --seed is the trainer's
    args = parser.parse_args(["--seed", "7", "--device", "cpu"])
    assert config_from_arguments(_Trainer, args) == _Trainer(seed=7)
    assert config_from_arguments(_DeviceConfig, args, fields=device_options) == _DeviceConfig(device="cpu")
    assert config_from_arguments(_DeviceConfig, args).seed == 7  # without fields: the trainer's too
