"""A trained diffusion policy, ready to act: observations in, an action chunk in physical units out."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from galley_learning.policy.config import PolicyConfig
from galley_learning.policy.frames import resize_images
from galley_learning.policy.model import DiffusionPolicy, pick_device, tokenize
from galley_learning.policy.normalize import Normalizer
from galley_learning.policy.observations import state_names

__all__ = ["PolicyRunner", "RunMismatchError"]


class RunMismatchError(ValueError):
    """A training run made by a galley whose observation differs from this one's."""


class PolicyRunner:
    """The EMA weights of a training run (``RUN/policy.pt``), sampling on ``device``.

    On a CPU it uses ``threads`` torch threads (0 leaves torch's setting alone).

    Raises:
        FileNotFoundError: no ``policy.pt`` in ``run`` (train one with ``galley train``).
        RunMismatchError: the run's state is not the one this galley computes for its preset.
    """

    def __init__(self, run: str | Path, device: str = "cpu", seed: int = 0, threads: int = 1) -> None:
        path = Path(run) / "policy.pt"
        if not path.exists():
            raise FileNotFoundError(f"{path} missing: train a policy with `galley train --out {run}`")
        saved = torch.load(path, map_location="cpu", weights_only=False)
        self.config = PolicyConfig.from_dict(saved["policy"], path)
        expected = len(state_names(self.config.observation))
        if self.config.state_dim != expected:
            raise RunMismatchError(
                f"{path} was trained on a {self.config.observation!r} state of {self.config.state_dim} "
                f"values, where this galley computes {expected}: train it again (galley train)"
            )
        self.normalizer = Normalizer(saved["stats"])
        self.device = pick_device(device)
        if self.device.type == "cpu" and threads > 0:
            torch.set_num_threads(threads)  # small networks: more threads only wait on each other
        self.model = DiffusionPolicy(self.config).to(self.device)
        self.model.load_state_dict(saved["weights"])
        self.model.eval()
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.step = int(saved.get("step", 0))

    def act(
        self, images: Mapping[str, NDArray[np.uint8]], state: NDArray[Any], step_text: str
    ) -> NDArray[np.float32]:
        """The next ``horizon`` actions (horizon, 10), in physical units.

        Args:
            images: camera -> (obs_horizon, H, W, 3) RGB, any size (resized as in training).
            state: (obs_horizon, state_dim) robot state rows (:func:`frames.robot_state`).
            step_text: the plan step being executed.
        """
        c = self.config
        width, height = c.image_size
        tensors = {}
        for camera in c.cameras:
            frames = resize_images(np.asarray(images[camera], dtype=np.uint8), (width, height))
            tensors[camera] = (
                torch.from_numpy(np.ascontiguousarray(frames))
                .to(self.device)
                .permute(0, 3, 1, 2)
                .float()[None]
                / 255.0
            )
        s = torch.from_numpy(self.normalizer.state(state)).to(self.device)[None]
        words = torch.tensor([tokenize(step_text, c.vocabulary) or [0]], device=self.device)
        with torch.no_grad():
            sampled = self.model.sample(self.model.encode(tensors, s, words), generator=self.generator)
        return self.normalizer.unnormalize_action(sampled[0].cpu().numpy())
