"""The policy's settings (galley_learning.policy.config): one source, torch-free, old runs read back."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from galley_cli import train as train_command
from galley_core.arguments import config_from_arguments
from galley_core.config import ConfigError, describe_fields
from galley_learning.policy.config import (
    SIZES,
    DatasetConfig,
    PolicyConfig,
    SavedSettingsError,
    TrainConfig,
    saved_config,
)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="galley")
    train_command.add_parser(parser.add_subparsers())
    return parser.parse_args(argv)


def test_the_settings_and_the_commands_options_import_without_torch() -> None:
    code = (
        "import sys, galley_learning.policy.config, galley_cli.train, galley_cli.train_planner; "
        "print(sorted(m for m in ('torch', 'diffusers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("cls", [DatasetConfig, PolicyConfig, TrainConfig])
def test_every_setting_has_a_doc_and_its_default_is_valid(cls: type) -> None:
    cls()  # the defaults pass the field checks and the cross-field checks
    for info in describe_fields(cls):
        assert info.spec.doc and info.spec.doc != info.name, f"{cls.__name__}.{info.name} has no doc"
    for preset in SIZES.values():
        assert isinstance(preset, PolicyConfig)


def test_galley_train_without_options_is_the_dataclasses_defaults() -> None:
    """`galley train` and Python give the same settings: sensors observations, anchor actions."""
    args = _parse(["train", "--data", "d", "--out", "r"])
    assert config_from_arguments(TrainConfig, args) == TrainConfig()
    dataset = config_from_arguments(DatasetConfig, args, fields=args.dataset_fields)
    assert dataset == DatasetConfig()
    assert (dataset.observation, dataset.actions) == ("sensors", "anchor")
    assert (PolicyConfig().observation, PolicyConfig().actions) == ("sensors", "anchor")


def test_galley_train_keeps_todays_spellings() -> None:
    argv = [
        "train",
        "--data",
        "d",
        "--out",
        "r",
        "--threads",
        "1",
        "--move-done",
        "0",
        "--image-size",
        "32x24",
    ]
    args = _parse([*argv, "--move-done-heading", "3.14159", "--size", "lowdim"])
    dataset = config_from_arguments(DatasetConfig, args, fields=args.dataset_fields)
    assert (dataset.move_done_m, dataset.move_done_rad, dataset.image_size) == (0.0, 3.14159, (32, 24))
    train = config_from_arguments(TrainConfig, args)
    assert (train.cpu_threads, train.size) == (1, "lowdim")
    assert dataset.seed == DatasetConfig.seed  # --seed is training's, not the held-out split's


@pytest.mark.parametrize(
    ("cls", "values", "field"),
    [
        (DatasetConfig, {"image_size": (96,)}, "image_size"),
        (DatasetConfig, {"cameras": ("top",)}, "cameras"),
        (DatasetConfig, {"move_done_rad": 0.0}, "move_done_rad"),
        (PolicyConfig, {"horizon": 10}, "horizon"),  # the U-Net of three levels halves it twice
        (PolicyConfig, {"action_steps": 17}, "action_steps"),
        (PolicyConfig, {"token_dim": 30, "heads": 4}, "token_dim"),
        (PolicyConfig, {"inference_steps": 200}, "inference_steps"),
        (TrainConfig, {"device": "gpu"}, "device"),
        (TrainConfig, {"size": "huge"}, "size"),
    ],
)
def test_bad_settings_name_the_field(cls: type, values: dict, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        cls(**values)
    assert err.value.field == field


# --- settings saved by an older galley --------------------------------------------------------------

#: config.json of a run made by the first galley that trained policies (6ba8ce2): no lr_schedule,
#: checkpoint_seconds or cpu_threads; a policy without observation, actions, text, head or mlp_hidden.
OLD_RUN = {
    "train": {
        "size": "toy",
        "steps": 30,
        "batch_size": 8,
        "lr": 0.0001,
        "weight_decay": 1e-06,
        "backbone_lr_scale": 0.1,
        "ema_decay": 0.999,
        "checkpoint_every": 15,
        "eval_every": 15,
        "mse_chunks": 64,
        "device": "auto",
        "seed": 0,
    },
    "policy": {
        "state_dim": 20,
        "action_dim": 10,
        "obs_horizon": 2,
        "horizon": 16,
        "action_steps": 8,
        "cameras": ["base", "wrist"],
        "image_size": [32, 24],
        "backbone_channels": [8, 16],
        "grid": 2,
        "token_dim": 32,
        "unet_channels": [32, 64],
        "heads": 2,
        "kernel_size": 5,
        "diffusion_steps": 50,
        "inference_steps": 10,
        "vocabulary": ["bowl", "move", "pick"],
    },
    "data": "/nowhere/dataset",
}


def test_an_old_run_reads_back_as_it_was_trained(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the run's settings are read by the training module (torch)")
    from galley_learning.policy.train import _saved

    (tmp_path / "config.json").write_text(json.dumps(OLD_RUN))
    train, policy = _saved(tmp_path)
    # trained with MSE, before the Huber loss became the default
    assert train == TrainConfig(
        steps=30, batch_size=8, checkpoint_every=15, eval_every=15, regression_loss="mse"
    )
    # before the presets a run saw Kitchen-R's state and learned absolute actions: not today's defaults
    assert (policy.observation, policy.actions, policy.text, policy.head) == (
        "kitchen_r",
        "absolute",
        True,
        "diffusion",
    )
    assert policy.image_size == (32, 24) and policy.vocabulary == ("bowl", "move", "pick")


def test_a_setting_this_galley_does_not_know_is_refused_by_file_and_name(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the run's settings are read by the training module (torch)")
    from galley_learning.policy.train import _saved

    newer = json.loads(json.dumps(OLD_RUN))
    newer["train"]["warmup_steps"] = 500
    (tmp_path / "config.json").write_text(json.dumps(newer))
    with pytest.raises(SavedSettingsError) as err:
        _saved(tmp_path)
    assert str(err.value).startswith(f"{tmp_path / 'config.json'} (train): warmup_steps is not a setting")

    bad = json.loads(json.dumps(OLD_RUN))
    bad["policy"]["horizon"] = 15
    (tmp_path / "config.json").write_text(json.dumps(bad))
    with pytest.raises(SavedSettingsError, match=r"config\.json \(policy\): horizon = 15 is not allowed"):
        _saved(tmp_path)


def _old_dataset(root: Path, config: dict) -> None:
    """A one-episode dataset folder without images, its meta.json as an older galley wrote it."""
    root.mkdir()
    for name, value in {
        "state": np.zeros((3, 20), np.float32),
        "action": np.zeros((3, 10), np.float32),
        "step": np.zeros(3, np.int16),
        "episode_ends": np.array([3], np.int64),
    }.items():
        np.save(root / f"{name}.npy", value)
    meta = {"frames": 3, "cameras": [], "config": config, "steps": ["move to the sink"], "stats": {}}
    meta["episodes"] = [{"bag": "b", "frames": 3, "split": "train"}]
    (root / "meta.json").write_text(json.dumps(meta))


def test_an_old_dataset_reads_back_with_the_settings_it_was_built_with(tmp_path: Path) -> None:
    from galley_learning.policy.dataset import PolicyData

    # the first galley's DatasetConfig: five settings
    _old_dataset(
        tmp_path / "d",
        {"rate_hz": 10.0, "image_size": [96, 72], "cameras": [], "val_fraction": 0.1, "seed": 0},
    )
    config = PolicyData.open(tmp_path / "d").meta["config"]
    assert config["observation"] == "kitchen_r" and config["actions"] == "absolute"
    assert config["arm_target"] == "command"  # the joint command's pose, before /arm/target
    assert config["move_done_m"] == 0.0 and config["move_done_rad"] == math.pi  # every frame trained on

    _old_dataset(tmp_path / "e", {"rate_hz": -1.0})
    with pytest.raises(SavedSettingsError, match=r"e/meta\.json: rate_hz = -1\.0 is not allowed: > 0 \(Hz\)"):
        PolicyData.open(tmp_path / "e")


def test_saved_settings_take_todays_default_only_for_what_the_old_galley_did_not_vary() -> None:
    config = saved_config(TrainConfig, {"steps": 10}, "run/config.json")
    assert config == TrainConfig(
        steps=10, regression_loss="mse"
    )  # what a run without the setting trained with
    old = saved_config(PolicyConfig, {"observation": "goal"}, "x")  # a run saved before the rename
    assert (old.observation, old.actions) == ("privileged", "absolute")
