"""Top-down images for planners: render an episode's, read a PNG, resize, and cut zone glimpses.

The simulator's top-down camera is orthographic and centred on the scene's bounds
(:func:`galley_sim.mjcf.scene_xml`), so a map point has a fixed pixel in an image of any size:
:func:`map_to_pixel`. galley's planner looks at the whole image (downscaled) and at one glimpse
per zone, a square of the image around the zone's centre resampled to a fixed size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from galley_core.episode import sample_episode
from galley_core.scene import Scene

__all__ = [
    "TopDownRenderer",
    "blank_like",
    "map_to_pixel",
    "pixels_per_metre",
    "read_png",
    "render_top_down",
    "resize",
    "top_down_size",
    "zone_glimpses",
]


def top_down_size(scene: Scene) -> tuple[int, int]:
    """(width, height) in pixels of the scene's top-down image, as the simulator publishes it."""
    top = scene.extras.get("top_down", {})
    return int(top.get("width_px", 640)), int(top.get("height_px", 480))


def map_to_pixel(scene: Scene, x_m: float, y_m: float, width: int, height: int) -> tuple[float, float]:
    """(column, row) in pixels of the map point (x, y) in metres, in a top-down image of that size."""
    x0, y0, x1, y1 = scene.bounds
    view_h = max(y1 - y0, (x1 - x0) * height / width)
    view_w = view_h * width / height
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    col = (x_m - (cx - view_w / 2.0)) / view_w * width
    row = ((cy + view_h / 2.0) - y_m) / view_h * height
    return col, row


def pixels_per_metre(scene: Scene, width: int, height: int) -> float:
    """Pixels per metre of a top-down image of that size (the same along both axes)."""
    x0, y0, x1, y1 = scene.bounds
    return width / (max(y1 - y0, (x1 - x0) * height / width) * width / height)


def resize(image: np.ndarray[Any, Any], width: int, height: int) -> np.ndarray[Any, Any]:
    """``image`` (H, W, 3) uint8 resized to (height, width, 3), bilinear (returned as is if equal)."""
    if image.shape[0] == height and image.shape[1] == width:
        return image
    from PIL import Image  # noqa: PLC0415 (optional: PIL)

    return np.asarray(Image.fromarray(image).resize((width, height), Image.Resampling.BILINEAR))


def zone_glimpses(
    scene: Scene, image: np.ndarray[Any, Any], *, side_m: float, size_px: int
) -> np.ndarray[Any, Any]:
    """One (size_px, size_px, 3) uint8 square per zone (scene order), ``side_m`` metres wide, centred on it.

    Sampled with nearest neighbours; pixels outside the image are black.
    """
    height, width = image.shape[:2]
    px_per_m = pixels_per_metre(scene, width, height)
    offsets = (np.arange(size_px) + 0.5) / size_px * side_m * px_per_m - side_m * px_per_m / 2.0
    out = np.zeros((len(scene.zones), size_px, size_px, 3), dtype=np.uint8)
    for i, zone in enumerate(scene.zones):
        col, row = map_to_pixel(scene, zone.center[0], zone.center[1], width, height)
        rows = np.floor(row + offsets).astype(int)
        cols = np.floor(col + offsets).astype(int)
        r_ok = (rows >= 0) & (rows < height)
        c_ok = (cols >= 0) & (cols < width)
        patch = image[np.clip(rows, 0, height - 1)][:, np.clip(cols, 0, width - 1)]
        out[i] = patch * (r_ok[:, None] & c_ok[None, :])[..., None]
    return out


def blank_like(image: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A uniform grey image of the same shape: the image with nothing to see."""
    return np.full_like(image, 128)


def read_png(path: str | Path) -> np.ndarray[Any, Any]:
    """An image file as (H, W, 3) uint8 RGB.

    Raises:
        FileNotFoundError: no such file, naming it.
        ValueError: not an image, naming the file.
    """
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 (optional: PIL)

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no image file {p}; give the top-down image as a PNG (or use --seed N)")
    try:
        with Image.open(p) as img:
            return np.asarray(img.convert("RGB"))
    except UnidentifiedImageError:
        raise ValueError(f"{p} is not an image file; give a PNG of the top-down view") from None


class TopDownRenderer:
    """Renders episodes' top-down images with the MuJoCo simulator (one model, reused).

    Args:
        scene: the scene.
        width, height: image size in pixels (default: the scene's top-down size).
    """

    def __init__(self, scene: Scene, width: int | None = None, height: int | None = None) -> None:
        from galley_sim.simulator import KitchenSim  # noqa: PLC0415 (deferred: mujoco)

        self.scene = scene
        default_w, default_h = top_down_size(scene)
        self.width, self.height = width or default_w, height or default_h
        self._sim = KitchenSim(scene)

    def render(self, seed: int) -> np.ndarray[Any, Any]:
        """(height, width, 3) uint8 top-down image of the scene's episode ``seed``."""
        self._sim.reset(sample_episode(self.scene, seed))
        return np.asarray(self._sim.render("top_down", width=self.width, height=self.height)).copy()


def render_top_down(scene: Scene, seed: int) -> np.ndarray[Any, Any]:
    """The top-down image of episode ``seed`` at the scene's top-down size (one-off; see TopDownRenderer)."""
    return TopDownRenderer(scene).render(seed)
