"""Kitchen-R's diffusion policy: a temporal U-Net denoising actions, cross-attending to observations.

A 1-D U-Net over the action sequence, conditioned by cross-attention on image, state and task-text
tokens (Sec. VI-B of Kitchen-R; Diffusion Policy, Chi et al., RSS 2023).

The condition is a sequence of tokens (Kitchen-R replaced Diffusion Policy's FiLM with
cross-attention over it):

* per camera and per history frame, the spatial features of that camera's own backbone (no weights
  shared between cameras), compressed by a 1x1 convolution and pooled to a ``grid`` x ``grid``
  map, one token per cell (the spatial features with a compression layer of Kitchen-R's ref. [34]);
* per history frame, the robot state through a linear layer;
* one token for the decomposed task text (the plan step), a mean of word embeddings.

Each history frame's tokens get a learned time embedding. The U-Net denoises the normalised action
sequence (``horizon`` x 10); every residual block adds the diffusion-step embedding and then
cross-attends to the condition. Training is DDPM (epsilon prediction), sampling DDIM, both from
``diffusers``' schedulers as in Diffusion Policy's reference code.

The low-dimensional presets (``lowdim``, ``lowdim-mlp``) have no cameras: the condition is the
state tokens alone (the ``sensors`` and ``privileged`` observation presets carry the step's
target). ``head: mlp`` replaces the denoising U-Net by a regression MLP from the flattened
condition to the action sequence (one forward pass per chunk, MSE loss): the smaller head,
measured against the diffusion head in docs/history.md ("A learned policy in closed loop").
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import torch
from torch import nn

from galley_learning.policy.config import SIZES, PolicyConfig

__all__ = ["SIZES", "DiffusionPolicy", "PolicyConfig", "pick_device", "tokenize"]


def pick_device(name: str) -> torch.device:
    """The torch device ``name`` for training and acting (``auto``: CUDA when torch sees a GPU, else CPU).

    Raises:
        ValueError: a CUDA device asked for where torch sees no GPU.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r}: torch sees no CUDA GPU here; use --device cpu")
    return torch.device(name)


def tokenize(text: str, vocabulary: tuple[str, ...]) -> list[int]:
    """Word indices of ``text`` (0 for a word not in the vocabulary; 1-based otherwise)."""
    index = {w: i + 1 for i, w in enumerate(vocabulary)}
    return [index.get(w, 0) for w in re.findall(r"[a-z]+", text.lower())]


def _groups(channels: int) -> int:
    return math.gcd(8, channels)


class _ConvBlock(nn.Sequential):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__(
            nn.Conv2d(cin, cout, 3, stride=stride, padding=1),
            nn.GroupNorm(_groups(cout), cout),
            nn.Mish(),
            nn.Conv2d(cout, cout, 3, padding=1),
            nn.GroupNorm(_groups(cout), cout),
            nn.Mish(),
        )


class VisionBackbone(nn.Module):
    """A small ResNet-style CNN with GroupNorm; spatial features compressed to grid x grid tokens."""

    def __init__(self, channels: tuple[int, ...], token_dim: int, grid: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for c in channels:
            layers.append(_ConvBlock(cin, c, stride=2))
            cin = c
        self.features = nn.Sequential(*layers)
        self.compress = nn.Conv2d(cin, token_dim, 1)
        self.pool = nn.AdaptiveAvgPool2d(grid)
        self.position = nn.Parameter(torch.zeros(grid * grid, token_dim))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """(B, 3, H, W) in [0, 1] -> (B, grid*grid, token_dim)."""
        x = self.pool(self.compress(self.features(images * 2.0 - 1.0)))
        return x.flatten(2).transpose(1, 2) + self.position


class _StepEmbedding(nn.Module):
    """Sinusoidal diffusion-step embedding and an MLP."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 4), nn.Mish(), nn.Linear(dim * 4, dim))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / max(half - 1, 1))
        angles = t.float()[:, None] * freqs[None]
        return self.mlp(torch.cat([angles.sin(), angles.cos()], dim=-1))


class _ResidualBlock(nn.Module):
    """Two 1-D convolutions, the step embedding added between them, then cross-attention."""

    def __init__(self, cin: int, cout: int, *, step_dim: int, cond_dim: int, heads: int, kernel: int) -> None:
        super().__init__()
        pad = kernel // 2
        self.conv1 = nn.Sequential(
            nn.Conv1d(cin, cout, kernel, padding=pad), nn.GroupNorm(_groups(cout), cout), nn.Mish()
        )
        self.conv2 = nn.Sequential(
            nn.Conv1d(cout, cout, kernel, padding=pad), nn.GroupNorm(_groups(cout), cout), nn.Mish()
        )
        self.step = nn.Sequential(nn.Mish(), nn.Linear(step_dim, cout))
        self.skip = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()
        self.norm = nn.LayerNorm(cout)
        self.attention = nn.MultiheadAttention(cout, heads, kdim=cond_dim, vdim=cond_dim, batch_first=True)

    def forward(self, x: torch.Tensor, step: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        h = self.conv1(x) + self.step(step)[:, :, None]
        h = self.conv2(h) + self.skip(x)
        q = self.norm(h.transpose(1, 2))
        attended, _ = self.attention(q, cond, cond, need_weights=False)
        return h + attended.transpose(1, 2)


class ConditionalUnet1D(nn.Module):
    """Diffusion Policy's temporal U-Net with cross-attention conditioning."""

    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        c, d, k, heads = config.unet_channels, config.token_dim, config.kernel_size, config.heads
        step_dim = c[0]
        self.step_embedding = _StepEmbedding(step_dim)

        def block(cin: int, cout: int) -> _ResidualBlock:
            return _ResidualBlock(cin, cout, step_dim=step_dim, cond_dim=d, heads=heads, kernel=k)

        self.down = nn.ModuleList()
        cin = config.action_dim
        for i, cout in enumerate(c):
            last = i == len(c) - 1
            self.down.append(
                nn.ModuleList(
                    [
                        block(cin, cout),
                        block(cout, cout),
                        nn.Identity() if last else nn.Conv1d(cout, cout, 3, 2, 1),
                    ]
                )
            )
            cin = cout
        self.mid = nn.ModuleList([block(c[-1], c[-1]), block(c[-1], c[-1])])
        self.up = nn.ModuleList()
        for cskip, cout in zip(reversed(c[1:]), reversed(c[:-1]), strict=True):
            self.up.append(
                nn.ModuleList(
                    [block(cskip * 2, cout), block(cout, cout), nn.ConvTranspose1d(cout, cout, 4, 2, 1)]
                )
            )
        self.final = nn.Sequential(
            nn.Conv1d(c[0], c[0], k, padding=k // 2),
            nn.GroupNorm(_groups(c[0]), c[0]),
            nn.Mish(),
            nn.Conv1d(c[0], config.action_dim, 1),
        )

    def forward(self, actions: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        """(B, horizon, action_dim) noisy actions, (B,) steps, (B, L, token_dim) -> predicted noise."""
        x = actions.transpose(1, 2)
        step = self.step_embedding(t)
        skips = []
        for first, second, down in self.down:
            x = second(first(x, step, cond), step, cond)
            skips.append(x)
            x = down(x)
        for b in self.mid:
            x = b(x, step, cond)
        for first, second, up in self.up:
            x = torch.cat([x, skips.pop()], dim=1)
            x = up(second(first(x, step, cond), step, cond))
        return self.final(x).transpose(1, 2)


class DiffusionPolicy(nn.Module):
    """Observations (images, state, step text) -> a normalised action sequence, by denoising."""

    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        from diffusers import DDIMScheduler, DDPMScheduler  # noqa: PLC0415 (optional: diffusers)

        self.config = config
        d = config.token_dim
        self.backbones = nn.ModuleDict(
            {c: VisionBackbone(config.backbone_channels, d, config.grid) for c in config.cameras}
        )
        self.state_encoder = nn.Linear(config.state_dim, d)
        self.words = nn.Embedding(len(config.vocabulary) + 1, d, padding_idx=0)
        self.history = nn.Parameter(torch.zeros(config.obs_horizon, 1, d))
        if config.head == "mlp":
            tokens = config.obs_horizon * (1 + len(config.cameras) * config.grid**2) + int(config.text)
            h = config.mlp_hidden
            self.mlp = nn.Sequential(
                nn.Linear(tokens * d, h),
                nn.Mish(),
                nn.Linear(h, h),
                nn.Mish(),
                nn.Linear(h, config.horizon * config.action_dim),
            )
        else:
            self.unet = ConditionalUnet1D(config)
        schedule = {
            "num_train_timesteps": config.diffusion_steps,
            "beta_schedule": "squaredcos_cap_v2",
            "clip_sample": True,
            "prediction_type": "epsilon",
        }
        self.train_scheduler = DDPMScheduler(**schedule)
        self.sample_scheduler = DDIMScheduler(**schedule)

    def backbone_parameters(self) -> list[nn.Parameter]:
        return list(self.backbones.parameters())

    def head_parameters(self) -> list[nn.Parameter]:
        ids = {id(p) for p in self.backbone_parameters()}
        return [p for p in self.parameters() if id(p) not in ids]

    def encode(
        self, images: dict[str, torch.Tensor], state: torch.Tensor, words: torch.Tensor
    ) -> torch.Tensor:
        """The condition tokens (B, L, token_dim).

        Args:
            images: camera -> (B, obs_horizon, 3, H, W) floats in [0, 1].
            state: (B, obs_horizon, state_dim), normalised.
            words: (B, W) word indices (0: padding or unknown).
        """
        b, to = state.shape[:2]
        per_frame = [self.state_encoder(state)[:, :, None, :]]  # (B, To, 1, D)
        for camera, backbone in self.backbones.items():
            x = images[camera]
            tokens = backbone(x.reshape(b * to, *x.shape[2:]))
            per_frame.append(tokens.reshape(b, to, tokens.shape[1], -1))
        frames = torch.cat(per_frame, dim=2) + self.history[None]  # (B, To, n, D)
        if not self.config.text:
            return frames.flatten(1, 2)
        known = (words > 0).float()[..., None]
        text = (self.words(words) * known).sum(dim=1) / known.sum(dim=1).clamp(min=1.0)  # (B, D)
        return torch.cat([frames.flatten(1, 2), text[:, None, :]], dim=1)

    def _regress(self, cond: torch.Tensor) -> torch.Tensor:
        c = self.config
        return self.mlp(cond.flatten(1)).reshape(len(cond), c.horizon, c.action_dim)

    def loss(
        self, cond: torch.Tensor, actions: torch.Tensor, regression: str, huber_delta: float
    ) -> torch.Tensor:
        """DDPM training loss: MSE of the predicted noise at a random diffusion step.

        The MLP head's: ``regression`` (``mse`` or ``huber`` with ``huber_delta``) of its actions, as
        TrainConfig's ``regression_loss`` and ``huber_delta`` say.
        """
        if self.config.head == "mlp":
            predicted = self._regress(cond)
            if regression == "huber":
                return nn.functional.huber_loss(predicted, actions, delta=huber_delta)
            return nn.functional.mse_loss(predicted, actions)
        noise = torch.randn_like(actions)
        t = torch.randint(0, self.config.diffusion_steps, (len(actions),), device=actions.device)
        noisy = self.train_scheduler.add_noise(actions, noise, t)
        return nn.functional.mse_loss(self.unet(noisy, t, cond), noise)

    @torch.no_grad()
    def sample(self, cond: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """DDIM: (B, horizon, action_dim) normalised actions (MLP head: its regression)."""
        c = self.config
        if c.head == "mlp":  # within the data's range, as DDIM's clip_sample keeps the samples
            return self._regress(cond).clamp(-1.0, 1.0)
        x = torch.randn((len(cond), c.horizon, c.action_dim), device=cond.device, generator=generator)
        self.sample_scheduler.set_timesteps(c.inference_steps)
        for t in self.sample_scheduler.timesteps:
            eps = self.unet(x, t.expand(len(cond)).to(cond.device), cond)
            x = self.sample_scheduler.step(eps, t, x, generator=generator).prev_sample
        return x


def with_vocabulary(config: PolicyConfig, words: list[str]) -> PolicyConfig:
    """``config`` with the task-text vocabulary ``words`` (sorted, unique)."""
    return replace(config, vocabulary=tuple(sorted(set(words))))
