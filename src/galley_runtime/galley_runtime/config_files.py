"""Where galley finds its configuration folder (scenes, parameter files) and what is in it.

Searched in order: ``$GALLEY_CONFIG_DIR``; ``./config`` in the working directory (the repository
root, where users run ``galley`` and ``ros2 launch``); the ``config`` folder of the source checkout
this package was installed from (editable installs).
"""

from __future__ import annotations

import os
from pathlib import Path

from galley_core.scene import Scene, load_scene, scene_path

__all__ = ["config_dirs", "default_params_files", "find_map", "find_scene"]


def config_dirs() -> list[Path]:
    """Existing configuration folders, most specific first."""
    candidates = []
    if env := os.environ.get("GALLEY_CONFIG_DIR"):
        candidates.append(Path(env))
    candidates.append(Path.cwd() / "config")
    candidates.append(Path(__file__).resolve().parents[3] / "config")
    seen: list[Path] = []
    for path in candidates:
        if path.is_dir() and path.resolve() not in [p.resolve() for p in seen]:
            seen.append(path)
    return seen


def default_params_files() -> list[Path]:
    """``config/galley.yaml``, every node's parameters, where it exists."""
    for folder in config_dirs():
        if (folder / "galley.yaml").is_file():
            return [folder / "galley.yaml"]
    return []


def find_map(scene: str) -> Path:
    """``maps/<scene>.yaml`` next to the configuration folder.

    Raises:
        FileNotFoundError: naming the command that writes it.
    """
    for folder in config_dirs():
        candidate = folder.parent / "maps" / f"{scene}.yaml"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no map maps/{scene}.yaml; write it with: galley map --scene {scene}")


def find_scene(name_or_path: str | Path) -> Scene:
    """The scene ``config/scenes/<name>.yaml`` of the configuration folders, or the scene file given.

    Raises:
        SceneError: no such scene (the message lists those found) or an invalid file.
    """
    return load_scene(scene_path(name_or_path, [folder / "scenes" for folder in config_dirs()]))
