"""Train the diffusion policy on a dataset folder: DDPM, AdamW, EMA, checkpoints, resumable.

A run folder holds ``config.json`` (the training and network settings), ``stats.json`` (the
dataset's normalisation statistics), ``checkpoint.pt`` (weights, EMA, optimiser, step; written every
``checkpoint_every`` steps, at most once per ``checkpoint_seconds``, and at the end; training
resumes from it; policy/checkpoints.py), ``policy.pt`` (the EMA weights
and everything the policy node needs), ``loss.csv`` and ``loss.png`` (training and validation loss)
and ``report.json`` (the last losses and the MSE of Kitchen-R's eq. (2) on the held-out episodes).
``params.yaml`` is the dataset's copy of its collection's sensor settings (camera size and rate, the
monitor's camera rate rules): wherever the run acts, they are layered first (policy/shipped.py).

Vision backbones learn at ``backbone_lr_scale`` (10 %) of the learning rate, as Kitchen-R reports.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from galley_core.tasks.grammar import valid_steps
from galley_learning.policy.checkpoints import Checkpoints, plot_loss
from galley_learning.policy.config import LR_SCHEDULES, SIZES, PolicyConfig, TrainConfig, saved_config
from galley_learning.policy.dataset import PolicyData
from galley_learning.policy.model import DiffusionPolicy, pick_device, tokenize, with_vocabulary
from galley_learning.policy.normalize import Normalizer
from galley_learning.policy.runtime import PolicyRunner
from galley_learning.policy.shipped import RUN_PARAMS
from galley_runtime.config_files import find_scene

__all__ = [
    "LR_SCHEDULES",
    "Batches",
    "TrainConfig",
    "evaluate_mse",
    "heldout_mse",
    "resident_images",
    "train",
]


class Batches:
    """Random training windows of a split.

    A window is ``obs_horizon`` frames of observations ending at a frame and the ``horizon``
    actions from that frame on (repeating the episode's last action past its end).
    """

    def __init__(
        self,
        data: PolicyData,
        config: PolicyConfig,
        normalizer: Normalizer,
        split: str,
        images: dict[str, torch.Tensor] | None = None,
    ) -> None:
        self.data, self.config, self.normalizer = data, config, normalizer
        self.resident = images or {}  # camera -> all its frames, already on the training device
        ranges = data.episode_ranges(split)
        frames = [np.arange(s, e) for s, e in ranges]
        self.index = np.concatenate(frames) if frames else np.zeros(0, dtype=np.int64)
        self.start = np.concatenate([np.full(e - s, s) for s, e in ranges]) if ranges else self.index
        self.end = np.concatenate([np.full(e - s, e) for s, e in ranges]) if ranges else self.index
        if data.sampled is not None:  # windows end only where the dataset samples (dataset.sampled_frames)
            keep = np.asarray(data.sampled)[self.index]
            self.index, self.start, self.end = self.index[keep], self.start[keep], self.end[keep]
        steps = data.meta["steps"]
        self.words = [tokenize(s, config.vocabulary) for s in steps]
        self.width = max((len(w) for w in self.words), default=1)

    def __len__(self) -> int:
        return len(self.index)

    def make(
        self, rows: np.ndarray, device: torch.device
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor]:
        """(images, state, words, actions) tensors for the windows ending at positions ``rows``."""
        c = self.config
        frame, start, end = self.index[rows], self.start[rows], self.end[rows]
        obs = np.maximum(frame[:, None] + np.arange(1 - c.obs_horizon, 1)[None], start[:, None])
        act = np.minimum(frame[:, None] + np.arange(c.horizon)[None], end[:, None] - 1)
        images = {
            cam: self._frames(cam, obs.ravel(), device)
            .reshape(len(rows), c.obs_horizon, *self.data.images[cam].shape[1:])
            .permute(0, 1, 4, 2, 3)
            .float()
            .div_(255.0)
            for cam in c.cameras
        }
        state = torch.from_numpy(self.normalizer.state(self.data.state[obs.ravel()])).to(device)
        actions = torch.from_numpy(self.normalizer.action(self.data.action[act.ravel()])).to(device)
        words = np.zeros((len(rows), self.width), dtype=np.int64)
        for i, s in enumerate(self.data.step[frame]):
            ids = self.words[s] if s >= 0 else []
            words[i, : len(ids)] = ids
        return (
            images,
            state.reshape(len(rows), c.obs_horizon, -1).float(),
            torch.from_numpy(words).to(device),
            actions.reshape(len(rows), c.horizon, -1).float(),
        )

    def _frames(self, camera: str, frames: np.ndarray, device: torch.device) -> torch.Tensor:
        if camera in self.resident:
            return self.resident[camera][torch.from_numpy(frames).to(self.resident[camera].device)]
        return torch.from_numpy(np.ascontiguousarray(self.data.images[camera][frames])).to(device)


def resident_images(
    data: PolicyData, cameras: tuple[str, ...], device: torch.device
) -> dict[str, torch.Tensor]:
    """Every camera frame copied to the GPU ``device`` once, when they fill at most half its free memory.

    Batches then gather windows on the GPU instead of from the memory-mapped files; on a CPU, or
    when the images do not fit, none are copied (an empty dict).
    """
    if device.type != "cuda":
        return {}
    size = sum(data.images[c].nbytes for c in cameras)
    free, _ = torch.cuda.mem_get_info(device)
    if size > free / 2:
        return {}
    resident = {}
    for c in cameras:
        frames = data.images[c]
        resident[c] = torch.empty(frames.shape, dtype=torch.uint8, device=device)
        for start in range(0, len(frames), _UPLOAD_FRAMES):  # through host memory a slice at a time
            chunk = np.array(frames[start : start + _UPLOAD_FRAMES])
            resident[c][start : start + len(chunk)] = torch.from_numpy(chunk).to(device)
    return resident


_UPLOAD_FRAMES = 8192


def _vocabulary(data: PolicyData) -> list[str]:
    """Words of the dataset's steps and of every valid step of its scenes (so unseen steps encode).

    A collection across kitchens has several scenes: each one's steps count (its kept scene file,
    else its name; one that is not found adds nothing).
    """
    words = [w for s in data.meta["steps"] for w in s.split()]
    scenes = {e.get("scene_file") or e["scene"] for e in data.meta["episodes"] if e.get("scene")}
    for name in sorted(scenes or {"kitchen"}):
        with contextlib.suppress(FileNotFoundError, ValueError):
            words += [w for s in valid_steps(find_scene(name)) for w in s.split()]
    return words


def _setup(
    run: Path, data: PolicyData, data_dir: Path, config: TrainConfig | None
) -> tuple[TrainConfig, PolicyConfig]:
    """The run's settings and network; the dataset's ``params.yaml`` copied into ``run``.

    When resuming, those saved in ``run`` (``config`` may raise the steps); else ``config`` and a
    network sized for the data, saved now.
    """
    sensors = data_dir / RUN_PARAMS
    if sensors.is_file() and not (run / RUN_PARAMS).exists():  # where the run acts, the same sensors
        run.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sensors, run / RUN_PARAMS)
    if (run / "checkpoint.pt").exists():
        train_config, net = _saved(run)
        return (replace(train_config, steps=config.steps) if config else train_config), net
    config = config or TrainConfig()
    preset = SIZES[config.size]
    cameras = tuple(data.meta["cameras"]) if preset.cameras else ()  # low-dim presets see no images
    observation = data.meta["config"]["observation"]
    net = with_vocabulary(
        replace(
            preset,
            cameras=cameras,
            image_size=tuple(data.meta["config"]["image_size"]),
            state_dim=data.state.shape[1],
            action_dim=data.action.shape[1],
            text=observation == "kitchen_r",  # the other presets carry the step's kind and target
            observation=observation,
            actions=data.meta["config"]["actions"],
        ),
        _vocabulary(data),
    )
    run.mkdir(parents=True, exist_ok=True)
    meta = {"train": asdict(config), "policy": net.to_dict(), "data": str(data_dir.resolve())}
    (run / "config.json").write_text(json.dumps(meta, indent=1) + "\n")
    (run / "stats.json").write_text(json.dumps(data.meta["stats"], indent=1) + "\n")
    return config, net


def _saved(run: Path) -> tuple[TrainConfig, PolicyConfig]:
    """The training settings and network a run saved (``RUN/config.json``; an older galley's too).

    Raises:
        SavedSettingsError: a setting this galley does not know or allow (named with the file).
    """
    path = run / "config.json"
    saved = json.loads(path.read_text())
    return saved_config(TrainConfig, saved["train"], f"{path} (train)"), PolicyConfig.from_dict(
        saved["policy"], f"{path} (policy)"
    )


def train(
    data_dir: str | Path,
    run_dir: str | Path,
    config: TrainConfig | None = None,
    *,
    progress: Callable[[int, int, float, float], None] | None = None,
) -> dict[str, Any]:
    """Train (or resume) a run; returns the report (also written to ``run_dir/report.json``).

    ``progress(step, steps, loss, seconds)`` is called every few steps.
    """
    run = Path(run_dir)
    data = PolicyData.open(data_dir)
    config, net = _setup(run, data, Path(data_dir), config)
    device = pick_device(config.device)
    if device.type == "cpu" and config.cpu_threads > 0:
        torch.set_num_threads(config.cpu_threads)  # small networks on a shared machine: fewer is faster
    torch.manual_seed(config.seed)
    normalizer = Normalizer(data.meta["stats"])
    model = DiffusionPolicy(net).to(device)
    optimizer = _optimizer(model, config)
    from diffusers.training_utils import EMAModel  # noqa: PLC0415 (optional: diffusers)

    ema = EMAModel(model.parameters(), decay=config.ema_decay, use_ema_warmup=True, power=0.75)
    checkpoints = Checkpoints(run, net, normalizer, config.checkpoint_every, config.checkpoint_seconds)
    step, history = checkpoints.resume(model, optimizer, ema, device)
    rng = np.random.default_rng(config.seed + step)
    if device.type == "cuda":
        torch.set_float32_matmul_precision("high")  # TF32 matrix products, as is usual for training
    images = resident_images(data, net.cameras, device)
    train_batches = Batches(data, net, normalizer, "train", images)
    val_batches = Batches(data, net, normalizer, "val", images)
    if not len(train_batches):
        raise ValueError(f"dataset {data_dir} has no training frames; collect more episodes")
    start = time.perf_counter()
    model.train()
    while step < config.steps:
        rows = rng.integers(0, len(train_batches), config.batch_size)
        images, state, words, actions = train_batches.make(rows, device)
        loss = model.loss(
            model.encode(images, state, words), actions, config.regression_loss, config.huber_delta
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        _schedule(optimizer, config, step)
        optimizer.step()
        ema.step(model.parameters())
        step += 1
        entry: dict[str, float] = {"step": step, "loss": float(loss.detach())}
        if step % config.eval_every == 0 or step == config.steps:
            entry["val_loss"] = _val_loss(model, ema, val_batches, config, device)
        history.append(entry)
        if progress is not None and (step % 10 == 0 or step == config.steps):
            progress(step, config.steps, entry["loss"], time.perf_counter() - start)
        checkpoints.after(step, history, model, optimizer, ema, last=step == config.steps)
    report = {
        "steps": step,
        "loss": float(np.mean([h["loss"] for h in history[-50:]])),
        "val_loss": next(
            (h["val_loss"] for h in reversed(history) if not math.isnan(h.get("val_loss", math.nan))), None
        ),
        "train_seconds": round(time.perf_counter() - start, 1),
        "device": str(device),
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    ema.store(model.parameters())
    ema.copy_to(model.parameters())
    report["mse_val"] = evaluate_mse(model, val_batches, config, device) if len(val_batches) else None
    ema.restore(model.parameters())
    (run / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    plot_loss(history, run / "loss.png")
    return report


def _optimizer(model: DiffusionPolicy, config: TrainConfig) -> torch.optim.Optimizer:
    """AdamW; the vision backbones (where there are any) at ``backbone_lr_scale`` of the rate."""
    groups = [{"params": model.head_parameters(), "lr": config.lr}]
    if model.backbone_parameters():
        groups.append({"params": model.backbone_parameters(), "lr": config.lr * config.backbone_lr_scale})
    return torch.optim.AdamW(groups, weight_decay=config.weight_decay)


def _schedule(optimizer: torch.optim.Optimizer, config: TrainConfig, step: int) -> None:
    """Set each group's rate for ``step`` (0-based) of ``config.steps`` (``lr_schedule``)."""
    factor = 0.5 * (1.0 + math.cos(math.pi * step / config.steps)) if config.lr_schedule == "cosine" else 1.0
    for group in optimizer.param_groups:
        # the group's own rate, kept at its first step (and in checkpoints, with the optimizer's state)
        group["lr"] = group.setdefault("initial_lr", group["lr"]) * factor


def _val_loss(
    model: DiffusionPolicy, ema: Any, batches: Batches, config: TrainConfig, device: torch.device
) -> float:
    if not len(batches):
        return math.nan
    ema.store(model.parameters())
    ema.copy_to(model.parameters())
    model.eval()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        torch.manual_seed(0)
        rows = rng.integers(0, len(batches), config.batch_size)
        images, state, words, actions = batches.make(rows, device)
        loss = float(
            model.loss(
                model.encode(images, state, words), actions, config.regression_loss, config.huber_delta
            )
        )
    model.train()
    ema.restore(model.parameters())
    return loss


def evaluate_mse(
    model: DiffusionPolicy, batches: Batches, config: TrainConfig, device: torch.device
) -> float:
    """Kitchen-R's offline metric, eq. 2's MSE term.

    The mean squared error between sampled and expert action chunks, in normalised units,
    averaged over ``mse_chunks`` windows of ``batches``.
    """
    model.eval()
    rows = np.linspace(0, len(batches) - 1, min(config.mse_chunks, len(batches))).astype(int)
    generator = torch.Generator(device=device).manual_seed(0)
    errors = []
    for chunk in np.array_split(rows, max(1, len(rows) // 32)):
        images, state, words, actions = batches.make(chunk, device)
        sampled = model.sample(model.encode(images, state, words), generator=generator)
        errors.append(((sampled - actions) ** 2).mean(dim=(1, 2)).cpu().numpy())
    model.train()
    return float(np.concatenate(errors).mean())


def heldout_mse(run: str | Path, device: str = "cpu") -> float | None:
    """The MSE of the run's policy (EMA weights) on its dataset's held-out episodes.

    Computed now; the training report's figure when the dataset is gone; None without held-out
    episodes.
    """
    run = Path(run)
    config = json.loads((run / "config.json").read_text())
    data_dir = Path(config["data"])
    if not (data_dir / "meta.json").exists():
        report = run / "report.json"
        return json.loads(report.read_text()).get("mse_val") if report.exists() else None
    runner = PolicyRunner(run, device=device, threads=0)
    batches = Batches(PolicyData.open(data_dir), runner.config, runner.normalizer, "val")
    if not len(batches):
        return None
    return evaluate_mse(runner.model, batches, _saved(run)[0], runner.device)
