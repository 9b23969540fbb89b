"""How galley's planner is trained (``galley train-planner``): the settings, without torch.

Kept apart from the training code (galley_train.py) so that the command line builds its options
from the fields without importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from galley_core.config import Config, param

__all__ = ["PlannerTrainConfig"]


@dataclass(frozen=True)
class PlannerTrainConfig(Config):
    """How galley's planner is trained (``galley train-planner``)."""

    episodes: int = param(500, "distinct rendered episodes (top-down images) of the scene", ge=10)
    instructions: int = param(
        2000, "training (instruction, episode, plan) samples from the suite's seen templates", ge=10
    )
    paraphrases: int = param(
        2000, "training samples from galley's own paraphrase grammar (planners/phrasing.py)", ge=0
    )
    word_dropout: float = param(
        0.1, "share of non-name words replaced by <unk> in each training batch", ge=0.0, lt=1.0
    )
    epochs: int = param(6, "passes over the training samples", ge=1)
    batch_size: int = param(64, "samples per gradient step", ge=1)
    learning_rate: float = param(
        2e-3, "peak AdamW learning rate (cosine decay after 1 epoch of warm-up)", gt=0.0
    )
    weight_decay: float = param(0.01, "AdamW weight decay", ge=0.0)
    presence_weight: float = param(0.5, "weight of the auxiliary which-object-in-which-zone loss", ge=0.0)
    seed: int = param(0, "seeds the data generation, the initialisation and the batch order", ge=0)
    threads: int = param(1, "torch CPU threads (1 avoids oversubscription on small machines)", ge=1)
    kitchens: int = param(
        100,
        "generated training kitchens (seeds 0, 1, ...; v3 weights only) trained on besides the scene",
        ge=0,
        le=100,
    )
    kitchen_episodes: int = param(12, "rendered episodes per generated training kitchen", ge=1)
    kitchen_samples: int = param(
        100, "requests per generated training kitchen (half templates, half paraphrases)", ge=2
    )
    validation: int = param(
        200, "suite train-split instructions to validate on after each epoch (0: all)", ge=0
    )
