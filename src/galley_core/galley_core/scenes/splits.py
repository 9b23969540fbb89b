"""The fixed sets of generated kitchens, by seed: training kitchens and unseen ones.

A kitchen is named by its seed (``kitchen_<seed>``) and drawn by :func:`galley_sim.scene_gen.generate`
from ``random.Random(seed * 1000 + attempt)``, the first attempt whose scene passes every check; so
a seed always gives the same kitchen. Nothing may be tuned, trained or chosen on the unseen kitchens.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["GENERATOR_VERSION", "SPLITS", "generator_version", "scene_name", "split_seeds"]

#: Version of the kitchen generator and its catalogue (grasps, sizes), stamped in the first line of
#: every scene file it writes. Raise it when a seed would draw another kitchen or other grasps: the
#: scene cache regenerates kitchens of an older version (1: the files of before the stamp).
GENERATOR_VERSION = 2
_STAMP = re.compile(r"generator version (\d+)")

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


def generator_version(scene_file: Path) -> int:
    """The generator version stamped in ``scene_file``'s first line; 1 for a file without a stamp."""
    with scene_file.open() as f:
        match = _STAMP.search(f.readline())
    return int(match[1]) if match else 1
