"""The diffusion policy's settings: dataset, network and training, without torch.

LeRobot's configuration / modeling split: the three settings dataclasses live here so that the
command line (``galley train``), the benches and the docs can read their fields (doc, unit,
bounds, default) without importing torch; ``model.py``, ``dataset.py`` and ``train.py`` use them.

* :class:`DatasetConfig`: how frames are taken from the bags (``galley train --data`` on a
  collection builds the dataset with it; saved as ``meta.json``'s ``config``);
* :class:`PolicyConfig`: the network's shape and the diffusion settings; :data:`SIZES` holds the
  presets ``galley train --size`` names (saved as ``config.json``'s ``policy`` and in ``policy.pt``);
* :class:`TrainConfig`: the optimisation (saved as ``config.json``'s ``train``).

Runs and datasets written by an older galley lack the settings it did not have yet;
:func:`saved_config` reads a saved settings mapping back, taking for such a missing setting the
value that galley used (``SAVED_BEFORE``), not today's default, and refuses a setting it does not
know by file and name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from galley_core.config import Config, ConfigError, config_from_values, param

__all__ = [
    "ACTIONS",
    "ACTION_PRESETS",
    "ARM_TARGETS",
    "CAMERAS",
    "HEADS",
    "LR_SCHEDULES",
    "OBSERVATIONS",
    "REGRESSION_LOSSES",
    "RENAMED_OBSERVATIONS",
    "SAVED_BEFORE",
    "SIZES",
    "TORCH_DEVICES",
    "DatasetConfig",
    "PolicyConfig",
    "SavedSettingsError",
    "TrainConfig",
    "saved_config",
]

C = TypeVar("C", bound=Config)

#: The state's presets (observations.state_names): what a robot has, perception's estimates in
#: place of ground truth (sensors, the default); Kitchen-R's relative and absolute end-effector
#: state with images and step text (kitchen_r); the step's target from the simulator's ground truth
#: and the oracle's grasp and release points (privileged, for comparison: no robot has it); or the
#: privileged preset less the target (proprio, an ablation).
OBSERVATIONS = ("sensors", "kitchen_r", "privileged", "proprio")
#: Preset names an older galley saved that this one calls otherwise (a saved run keeps loading).
RENAMED_OBSERVATIONS = {"goal": "privileged"}
#: The action kinds (observations.encode_actions): end-effector targets in base_link (absolute),
#: relative to the current pose (delta), to a pick's grasp / a place's release point as the oracle
#: computes them (contact: privileged only), or to the sensors preset's anchor, a point of the
#: robot's own making (anchor: sensors only; sensors.SensorGoals).
ACTIONS = ("absolute", "delta", "contact", "anchor")
#: The action kinds that read a preset's step features, and the preset whose features they read.
ACTION_PRESETS = {"contact": ("privileged",), "anchor": ("sensors",)}
#: The arm's action in a pick or place: the pick-and-place machine's phase goal, or the next joint
#: command's pose.
ARM_TARGETS = ("phase", "command")
#: Camera name -> image topic of the built-in simulator (and of the Isaac Sim graphs).
CAMERAS: Mapping[str, str] = {"base": "/camera/base/image_raw", "wrist": "/camera/wrist/image_raw"}
#: The denoising U-Net (diffusion), or a regression MLP from the condition to the actions (mlp).
HEADS = ("diffusion", "mlp")
#: The torch devices a policy trains or acts on (model.pick_device): auto is CUDA where torch sees a GPU.
TORCH_DEVICES = "auto|cpu|cuda(:[0-9]+)?"
#: The learning rate over the run: constant, or cosine from ``lr`` down to 0 at the last step.
LR_SCHEDULES = ("constant", "cosine")
#: The MLP head's loss on its actions (model.DiffusionPolicy.loss): mean squared error, or Huber
#: (squared within ``huber_delta``, linear beyond: the median's robustness for large errors).
REGRESSION_LOSSES = ("mse", "huber")


class SavedSettingsError(ValueError):
    """A saved settings file (a run's config.json or policy.pt, a dataset's meta.json) is refused."""


@dataclass(frozen=True)
class DatasetConfig(Config):
    """How frames are taken from the bags."""

    rate_hz: float = param(
        10.0, "frames per second taken from the bags (the cameras' rate)", unit="Hz", gt=0.0
    )
    image_size: tuple[int, ...] = param((96, 72), "images resized to width, height", unit="px", ge=8)
    cameras: tuple[str, ...] = param(
        ("base", "wrist"), "cameras read; none: a low-dimensional dataset (no images)", choices=tuple(CAMERAS)
    )
    val_fraction: float = param(
        0.1, "share of the episodes held out (seeded shuffle) for the validation loss and MSE", ge=0.0, lt=1.0
    )
    seed: int = param(0, "seed of the shuffle choosing the held-out episodes", ge=0)
    observation: str = param(
        "sensors",
        "what the policy sees: sensors (proprioception, the map's goal and /plan, the step, perception's "
        "estimates: what a robot has), kitchen_r (Kitchen-R's: images, step text, robot state), "
        "privileged (the simulator's object poses and the oracle's grasp points: for comparison), "
        "proprio (privileged less the target: an ablation)",
        choices=OBSERVATIONS,
    )
    actions: str = param(
        "anchor",
        "end-effector targets relative to the sensors preset's anchor (anchor: a pick's object as "
        "perceived at its start, a place's spot chosen among perceived objects), to the oracle's grasp "
        "or release point (contact; privileged only), to the current pose (delta) or in base_link "
        "(absolute); the current pose in a move for anchor and contact",
        choices=ACTIONS,
    )
    scene: str = param("kitchen", "scene the bags were recorded in: its objects' grasps (contact point)")
    arm_target: str = param(
        "phase",
        "the arm's action in a pick or place: the pick-and-place machine's phase goal, where the arm is "
        "heading (phase; bags with /arm/target), or the next joint command's pose (command)",
        choices=ARM_TARGETS,
    )
    move_done_m: float = param(
        0.10,
        "train on no move frame this near its goal: the executor ends a policy's move there, and the "
        "oracle's turn in place after it teaches stopping short (0: every frame)",
        unit="m",
        ge=0.0,
    )
    move_done_rad: float = param(
        0.1,
        "... and facing the goal's heading this closely (task_executor.nav_heading_tolerance_rad), so "
        "that the oracle's turn to it is learned (3.14159: any heading, the turn untrained)",
        unit="rad",
        gt=0.0,
        le=math.pi,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.image_size) != 2:
            raise ConfigError("image_size", self.image_size, "two values, width and height")
        presets = ACTION_PRESETS.get(self.actions, OBSERVATIONS)
        if self.observation not in presets:
            raise ConfigError(
                "actions",
                self.actions,
                f"with observation {' or '.join(presets)} (it reads that preset's points)",
            )


@dataclass(frozen=True)
class PolicyConfig(Config):
    """The network's shape and the diffusion settings (``SIZES`` holds presets)."""

    state_dim: int = param(20, "values of the state vector (the dataset's)", ge=1)
    action_dim: int = param(10, "values of an action point (the dataset's)", ge=1)
    obs_horizon: int = param(2, "observation frames in the condition (the latest and those before)", ge=1)
    horizon: int = param(16, "actions predicted per chunk", ge=1)
    action_steps: int = param(8, "actions executed per chunk before sampling again (<= horizon)", ge=1)
    cameras: tuple[str, ...] = param(
        ("base", "wrist"), "cameras seen, each through its own backbone", choices=tuple(CAMERAS)
    )
    image_size: tuple[int, ...] = param((96, 72), "images' width, height", unit="px", ge=8)
    backbone_channels: tuple[int, ...] = param(
        (32, 64, 128, 256), "channels of the vision backbone's stages (each halves the image)", ge=1
    )
    grid: int = param(3, "image tokens per side: the features pooled to grid x grid", ge=1)
    token_dim: int = param(256, "width of the condition tokens (divisible by heads)", ge=1)
    unet_channels: tuple[int, ...] = param(
        (256, 512, 1024), "channels of the U-Net's levels (each but the last halves the horizon)", ge=1
    )
    heads: int = param(4, "cross-attention heads", ge=1)
    kernel_size: int = param(5, "the U-Net's 1-D convolution width", ge=1)
    diffusion_steps: int = param(100, "DDPM noise levels in training", ge=1)
    inference_steps: int = param(10, "DDIM steps per sampled chunk (<= diffusion_steps)", ge=1)
    vocabulary: tuple[str, ...] = param((), "the step texts' words (the dataset's and the scene's)")
    text: bool = param(True, "a task-text token (the step text) in the condition")
    head: str = param("diffusion", "diffusion: the denoising U-Net; mlp: a regression MLP", choices=HEADS)
    mlp_hidden: int = param(256, "the MLP head's width", ge=1)
    observation: str = param(
        DatasetConfig.observation, "the state's preset, from the dataset", choices=OBSERVATIONS
    )
    actions: str = param(DatasetConfig.actions, "the action kind, from the dataset", choices=ACTIONS)

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.image_size) != 2:
            raise ConfigError("image_size", self.image_size, "two values, width and height")
        if not self.unet_channels:
            raise ConfigError("unet_channels", self.unet_channels, "at least one level")
        halvings = len(self.unet_channels) - 1
        if self.horizon % (2**halvings):
            raise ConfigError(
                "horizon", self.horizon, f"divisible by 2^{halvings} (the U-Net halves it {halvings} times)"
            )
        if self.action_steps > self.horizon:
            raise ConfigError("action_steps", self.action_steps, f"at most horizon ({self.horizon})")
        if self.token_dim % self.heads:
            raise ConfigError("token_dim", self.token_dim, f"divisible by heads ({self.heads})")
        if self.inference_steps > self.diffusion_steps:
            raise ConfigError(
                "inference_steps", self.inference_steps, f"at most diffusion_steps ({self.diffusion_steps})"
            )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], source: str | Path = "policy settings") -> PolicyConfig:
        """The settings saved by :meth:`to_dict` (by this galley or an older one: :func:`saved_config`)."""
        return saved_config(cls, values, source)


_TOY = PolicyConfig(
    backbone_channels=(8, 16), grid=2, token_dim=32, unet_channels=(32, 64), heads=2, diffusion_steps=50
)
#: Presets: ``toy`` trains in minutes on a CPU (CI), ``toy-mlp`` is its images with the regression
#: MLP head in place of the denoising U-Net (the head the low-dimensional policy learns best with on
#: a CPU); ``small`` and ``base`` are GPU experiments (``base`` is Diffusion Policy's U-Net width);
#: ``lowdim`` and ``lowdim-mlp`` see the state and goal vectors only (no images) and train on a CPU.
SIZES: dict[str, PolicyConfig] = {
    "toy": _TOY,
    "toy-mlp": dataclasses.replace(_TOY, head="mlp"),
    "small": PolicyConfig(backbone_channels=(32, 64, 128), token_dim=128, unet_channels=(128, 256, 512)),
    "base": PolicyConfig(),
    "lowdim": PolicyConfig(cameras=(), token_dim=64, unet_channels=(64, 128), heads=4, diffusion_steps=50),
    "lowdim-mlp": PolicyConfig(cameras=(), token_dim=64, head="mlp", mlp_hidden=256),
}


@dataclass(frozen=True)
class TrainConfig(Config):
    """Training settings."""

    size: str = param(
        "toy",
        "network preset: lowdim, lowdim-mlp (state and goal vectors, no images: CPU), toy, toy-mlp "
        "(images, CPU, minutes; toy-mlp: the regression MLP head), small, base (images, GPU)",
        choices=tuple(SIZES),
    )
    steps: int = param(2000, "gradient steps in total (a resumed run may raise it)", ge=1)
    batch_size: int = param(64, "training windows per step", ge=1)
    lr: float = param(1e-4, "learning rate (the vision backbones': backbone_lr_scale of it)", gt=0.0)
    lr_schedule: str = param(
        "constant",
        "constant, or cosine: from lr down to 0 at the last step, as Diffusion Policy trains (without its "
        "warm-up; the EMA warms up instead); by step, so a resumed run keeps its place",
        choices=LR_SCHEDULES,
    )
    weight_decay: float = param(1e-6, "AdamW weight decay", ge=0.0)
    regression_loss: str = param(
        "huber",
        "the MLP head's loss on its actions: huber (squared within huber_delta, linear beyond), which "
        "follows the typical demonstration where a few disagree with what the observation shows, or mse, "
        "whose mean follows them too (the shipped policy: pick 0.88 against 0.64, place 0.30 against "
        "0.18); the diffusion head's noise prediction is always MSE, as DDPM trains",
        choices=REGRESSION_LOSSES,
    )
    huber_delta: float = param(
        0.03, "where huber turns linear, in normalised action units ([-1, 1] over the data's range)", gt=0.0
    )
    backbone_lr_scale: float = param(
        0.1, "the vision backbones' learning rate as a share of lr (Kitchen-R: 10 %)", gt=0.0
    )
    ema_decay: float = param(0.999, "decay of the weights' exponential moving average", ge=0.0, le=1.0)
    checkpoint_every: int = param(500, "steps between checkpoints", ge=1)
    checkpoint_seconds: float = param(
        60.0,
        "... but at most one per this many seconds of training (and one at the last step): a checkpoint "
        "holds the loss history, so its cost grows with the run",
        unit="s",
        ge=0.0,
    )
    eval_every: int = param(250, "steps between validation losses (and one at the last step)", ge=1)
    mse_chunks: int = param(64, "held-out windows of the final MSE (Kitchen-R's eq. 2)", ge=1)
    device: str = param(
        "auto",
        "torch device: auto (CUDA when torch sees a GPU), cpu, cuda, cuda:N",
        pattern=TORCH_DEVICES,
    )
    seed: int = param(0, "seed of initialisation and batches", ge=0)
    cpu_threads: int = param(
        0,
        "torch threads on a CPU (0: torch's default, one per core; 1: fastest for the low-dim presets on a "
        "busy machine)",
        ge=0,
    )


#: For each settings class, what an older galley that did not save a setting yet used for it: the
#: observation and action presets came after Kitchen-R's state and absolute actions, the arm target
#: after the joint command's pose, the move mask (and its heading) after training on every frame.
SAVED_BEFORE: dict[type[Config], dict[str, Any]] = {
    DatasetConfig: {
        "observation": "kitchen_r",
        "actions": "absolute",
        "arm_target": "command",
        "move_done_m": 0.0,
        "move_done_rad": math.pi,
    },
    PolicyConfig: {"observation": "kitchen_r", "actions": "absolute"},
    TrainConfig: {"regression_loss": "mse"},
}


def saved_config(cls: type[C], values: Mapping[str, Any], source: str | Path) -> C:
    """The settings ``cls`` that a run or dataset saved as ``values`` (JSON-like: lists for tuples).

    A setting missing from ``values`` (the file is older than the setting) takes the value the galley
    that wrote it used (``SAVED_BEFORE``), else today's default.

    Args:
        source: the file the values were read from (named in errors, e.g. ``RUN/config.json``).

    Raises:
        SavedSettingsError: a name that is not one of ``cls``'s settings, or a value this galley does
            not allow; the message names ``source`` and the setting.
    """
    names = {f.name for f in dataclasses.fields(cls)}
    renamed = RENAMED_OBSERVATIONS.get(values.get("observation", ""))
    if renamed is not None:  # the same preset under its new name
        values = {**values, "observation": renamed}
    unknown = [k for k in values if k not in names]
    if unknown:
        raise SavedSettingsError(
            f"{source}: {', '.join(unknown)} is not a setting of this galley's {cls.__name__} "
            f"(written by another galley version?); make it again with this one, or remove the setting"
        )
    before = {k: v for k, v in SAVED_BEFORE.get(cls, {}).items() if k not in values}
    try:
        return config_from_values(cls, {**before, **values})
    except ConfigError as err:
        raise SavedSettingsError(
            f"{source}: {err.field} = {err.value!r} is not allowed: {err.allowed}"
        ) from None
