"""The MLP head's training loss (galley train --regression-loss)."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("torch")
pytest.importorskip("diffusers")
import torch

from galley_learning.policy.model import SIZES, DiffusionPolicy


def _fit(
    model: DiffusionPolicy,
    observation: tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor],
    actions: torch.Tensor,
    *,
    regression: str,
    steps: int,
) -> None:
    """``steps`` of Adam on the MLP head's loss; ``observation`` is encode's (images, state, words)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(steps):
        loss = model.loss(model.encode(*observation), actions, regression, 0.03)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@pytest.mark.parametrize(("regression", "expected"), [("mse", 0.3), ("huber", 0.0)])
def test_the_mlp_head_s_huber_loss_follows_the_typical_demonstration_where_mse_follows_the_mean(
    regression: str, expected: float
) -> None:
    """Three demonstrations in ten disagree with the other seven on what one observation asks.

    Trained on them, MSE predicts their mean (0.3) and Huber about the majority's answer (0), as
    galley train --regression-loss huber does where a few place steps released far from the anchor.
    """
    torch.manual_seed(0)
    config = replace(SIZES["lowdim-mlp"], state_dim=4, action_dim=2, horizon=4, action_steps=2, text=False)
    model = DiffusionPolicy(config)
    state = torch.zeros(10, config.obs_horizon, 4)
    actions = torch.zeros(10, config.horizon, 2)
    actions[7:] = 1.0  # the three that disagree
    _fit(model, ({}, state, torch.zeros(10, 1, dtype=torch.long)), actions, regression=regression, steps=400)
    with torch.no_grad():
        predicted = model._regress(model.encode({}, state[:1], torch.zeros(1, 1, dtype=torch.long)))
    assert float(predicted.mean()) == pytest.approx(expected, abs=0.05)


def test_the_image_preset_with_the_mlp_head_reads_its_action_from_the_images() -> None:
    """``toy-mlp``: the toy backbones feed the regression head, and a trained one tells images apart.

    Two observations alike in state and text differ only in the base camera's image (dark or
    bright); their actions differ too. Only the images can tell the head which one it sees.
    """
    torch.manual_seed(0)
    config = replace(
        SIZES["toy-mlp"], cameras=("base",), state_dim=4, action_dim=2, horizon=4, action_steps=2, text=False
    )
    assert config.head == "mlp" and config.backbone_channels == SIZES["toy"].backbone_channels
    model = DiffusionPolicy(config)
    images = torch.zeros(2, config.obs_horizon, 3, 24, 32)
    images[1] = 1.0
    actions = torch.stack([torch.full((config.horizon, 2), -0.5), torch.full((config.horizon, 2), 0.5)])
    state, words = torch.zeros(2, config.obs_horizon, 4), torch.zeros(2, 1, dtype=torch.long)
    _fit(model, ({"base": images}, state, words), actions, regression="mse", steps=60)
    with torch.no_grad():
        predicted = model._regress(model.encode({"base": images}, state, words))
    assert predicted.shape == (2, config.horizon, 2)
    assert predicted[0].mean() == pytest.approx(-0.5, abs=0.1)
    assert predicted[1].mean() == pytest.approx(0.5, abs=0.1)
