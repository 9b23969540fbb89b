"""A training run's files as it goes: the checkpoint, the policy, the loss log and its picture.

``RUN/checkpoint.pt`` (model, optimizer, EMA, step, loss history: what ``galley train`` resumes
from), ``RUN/policy.pt`` (the EMA weights with the network's settings and the normalisation: what
the ``diffusion_policy`` node loads), ``RUN/loss.csv`` (step, loss, val_loss) and ``RUN/loss.png``.
A checkpoint holds the whole loss history, so writing one costs more the longer the run: they are
written every ``every`` steps but at most once per ``seconds`` of training, and ``loss.csv`` is
appended to rather than rewritten. (Measured before: a checkpoint every 500 steps, with loss.csv
rewritten each time, slowed a one-thread run of the low-dimensional MLP from about 550 steps a
second at its start to 195 at step 400,000, so a run sized from its first seconds' rate took
twice its time.)
"""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from galley_core.files import replacing
from galley_learning.policy.model import DiffusionPolicy, PolicyConfig
from galley_learning.policy.normalize import Normalizer

__all__ = ["Checkpoints", "plot_loss"]

LOG_COLUMNS = ("step", "loss", "val_loss")


class Checkpoints:
    """Writes a run's checkpoint, policy and loss log, and resumes from them."""

    def __init__(
        self, run: Path, net: PolicyConfig, normalizer: Normalizer, every: int, seconds: float
    ) -> None:
        self.run, self.net, self.normalizer = run, net, normalizer
        self.every, self.seconds = every, seconds
        self.saved_s = time.perf_counter()
        self.logged = 0  # rows of the history in loss.csv

    def resume(
        self, model: DiffusionPolicy, optimizer: torch.optim.Optimizer, ema: Any, device: torch.device
    ) -> tuple[int, list[dict[str, float]]]:
        """Load the checkpoint when there is one; (step, loss history) to go on from.

        ``loss.csv`` is written afresh from that history: rows logged after the checkpoint are dropped.
        """
        path = self.run / "checkpoint.pt"
        step, history = 0, []
        if path.exists():
            saved = torch.load(path, map_location=device, weights_only=False)
            model.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            ema.load_state_dict(saved["ema"])
            ema.to(device)
            step, history = int(saved["step"]), list(saved["history"])
        with (self.run / "loss.csv").open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=LOG_COLUMNS)
            writer.writeheader()
            writer.writerows(history)
        self.logged, self.saved_s = len(history), time.perf_counter()
        return step, history

    def after(
        self,
        step: int,
        history: list[dict[str, float]],
        model: DiffusionPolicy,
        optimizer: torch.optim.Optimizer,
        ema: Any,
        *,
        last: bool,
    ) -> None:
        """After a training step: save when one is due (and always at the ``last`` step)."""
        due = step % self.every == 0 and time.perf_counter() - self.saved_s >= self.seconds
        if not (due or last):
            return
        with (self.run / "loss.csv").open("a", newline="") as f:
            csv.DictWriter(f, fieldnames=LOG_COLUMNS).writerows(history[self.logged :])
        self.logged = len(history)
        state = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "ema": ema.state_dict(),
            "step": step,
            "history": history,
        }
        with replacing(self.run / "checkpoint.pt") as tmp:  # a reader never sees half a file
            torch.save(state, tmp)
        ema.store(model.parameters())
        ema.copy_to(model.parameters())
        policy = {"policy": self.net.to_dict(), "stats": self.normalizer.stats, "step": step}
        with replacing(self.run / "policy.pt") as tmp:
            torch.save(policy | {"weights": model.state_dict()}, tmp)
        ema.restore(model.parameters())
        self.saved_s = time.perf_counter()


def plot_loss(history: list[dict[str, float]], path: Path) -> None:
    """The training and validation loss over the steps, log scale."""
    import matplotlib  # noqa: PLC0415 (optional: matplotlib)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 (optional: matplotlib)

    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps = np.array([h["step"] for h in history])
    loss = np.array([h["loss"] for h in history])
    ax.plot(steps, loss, lw=0.6, alpha=0.4, color="C0")
    k = max(1, len(loss) // 50)
    if len(loss) >= k:
        smooth = np.convolve(loss, np.ones(k) / k, mode="valid")
        ax.plot(steps[k - 1 :], smooth, color="C0", label="training loss")
    val = [(h["step"], h["val_loss"]) for h in history if "val_loss" in h and not math.isnan(h["val_loss"])]
    if val:
        ax.plot(*zip(*val, strict=True), "o-", color="C1", label="validation loss (EMA)")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("noise MSE")
    ax.set_title("diffusion policy training")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
