"""galley run, eval and collect build their options from galley_episodes' Config fields."""

from __future__ import annotations

import dataclasses

import pytest

from galley_cli.main import _build_parser
from galley_core.arguments import config_from_arguments
from galley_core.config import describe_fields
from galley_episodes import CollectConfig, EpisodeConfig, EvalConfig


def _parse(*argv: str):
    return _build_parser().parse_args(list(argv))


def test_options_left_out_give_the_configs_defaults():
    run = _parse("run", "Move the bowl to the green zone")
    assert config_from_arguments(EpisodeConfig, run) == EpisodeConfig()
    evaluation = _parse("eval", "--mode", "joint")
    assert config_from_arguments(EvalConfig, evaluation) == EvalConfig(mode="joint")
    collection = _parse("collect", "--episodes", "3", "--out", "c")
    assert config_from_arguments(CollectConfig, collection) == CollectConfig(episodes=3)


def test_todays_flags_set_the_fields():
    args = _parse("run", "x", "--seed", "4", "--plan", "move to the blue zone", "--replan", "1", "--video")
    assert config_from_arguments(EpisodeConfig, args) == EpisodeConfig(
        seed=4, plan="move to the blue zone", replan=1, video=True
    )
    args = _parse("collect", "--episodes", "2", "--out", "c", "--image-size", "96x72", "--camera-rate", "5")
    assert config_from_arguments(CollectConfig, args) == CollectConfig(
        episodes=2, image_size=(96, 72), camera_rate_hz=5.0
    )


@pytest.mark.parametrize(
    ("command", "cls", "left_out"),
    [
        ("run", EpisodeConfig, {"cameras", "perturb", "topdown"}),
        ("eval", EvalConfig, set()),
        ("collect", CollectConfig, set()),
    ],
)
def test_every_field_has_its_doc_in_the_help(command, cls, left_out, capsys):
    with pytest.raises(SystemExit):
        _parse(command, "--help")
    text = " ".join(capsys.readouterr().out.split())
    for field in describe_fields(cls):
        if field.name not in left_out and field.name != "replan":  # --replan N: a count on the CLI
            assert field.spec.doc in text, field.name
    assert {f.name for f in dataclasses.fields(cls)} >= left_out
