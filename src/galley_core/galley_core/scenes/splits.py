"""The fixed sets of generated kitchens, by seed: training kitchens and unseen ones.

A kitchen is named by its seed (``kitchen_<seed>``) and drawn by :func:`galley_sim.scene_gen.generate`
from ``random.Random(seed * 1000 + attempt)``, the first attempt whose scene passes every check; so
a seed always gives the same kitchen. Nothing may be tuned, trained or chosen on the unseen kitchens.
"""

from __future__ import annotations

__all__ = ["SPLITS", "scene_name", "split_seeds"]

#: Seeds of each split: 100 training kitchens and 20 unseen ones.
SPLITS: dict[str, range] = {"train": range(0, 100), "unseen": range(1000, 1020)}


def split_seeds(split: str) -> list[int]:
    """The seeds of ``split``.

    Raises:
        ValueError: an unknown split; the message lists the splits.
    """
    if split not in SPLITS:
        raise ValueError(f"no scene split {split!r}; splits: {', '.join(SPLITS)}")
    return list(SPLITS[split])


def scene_name(seed: int) -> str:
    """The name of the generated kitchen of ``seed``."""
    return f"kitchen_{seed}"
