"""The robot cameras' RGB images: drawn side by side into one offscreen buffer, read back once.

With software OpenGL (Mesa's llvmpipe, what headless machines without a GPU have) reading pixels
back waits for the rasteriser, and for small images that costs as much as drawing them. The
robot's two cameras fire together, so :class:`SideBySideRenderer` draws both into neighbouring
viewports of one buffer and pays that once.

They are anti-aliased by supersampling rather than by MuJoCo's 4x multisampling: drawn at twice
the width and height without multisampling, each 2x2 block averaged into one pixel. That is four
samples per pixel too, and llvmpipe draws them in 60 to 90 % of the time (less at small sizes,
where multisampling's fixed cost per frame dominates), equally accurate: against a
64-samples-per-pixel reference the mean error is 0.27 grey levels at 96x72 (multisampled 0.29),
0.19 at 160x120 (0.17), 0.08 at 320x240 (0.08) and 0.05 at 640x480 (0.04). ``bench/render.py``
measures both.

Small images also get coarser round geoms. MuJoCo draws capsules, cylinders and spheres as
polygons of ``vis.quality.numslices`` by ``numstacks`` (28 by 16), and at small sizes llvmpipe's
time goes to those vertices, not to pixels: the robot's own arm, close to both cameras, cost half
of each frame at 96x72. Images up to :data:`COARSE_UP_TO_HEIGHT` pixels tall are drawn with
:data:`COARSE_TESSELLATION` instead. Against round geoms tessellated 100 by 50 (near exact), the
mean error is then 0.11 grey levels at 96x72 (28 by 16: 0.07) and 0.12 at 160x120 (0.06), under
the anti-aliasing error at those sizes (0.27, 0.19); at 320x240 it would not be (0.08), and the
saving is small there, so larger images keep MuJoCo's. Both cameras at 96x72 draw in about 40 %
less time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import cv2
import mujoco
import numpy as np
from numpy.typing import NDArray

__all__ = [
    "COARSE_TESSELLATION",
    "COARSE_UP_TO_HEIGHT",
    "SUPERSAMPLING",
    "SideBySideRenderer",
    "average_blocks",
    "context_settings",
]

SUPERSAMPLING = 2
"""Each image is drawn at this many times its width and height, then averaged down."""

COARSE_TESSELLATION = (20, 10)
"""Slices and stacks of round geoms in images up to :data:`COARSE_UP_TO_HEIGHT` pixels tall."""

COARSE_UP_TO_HEIGHT = 120


@contextmanager
def context_settings(
    model: mujoco.MjModel,
    buffer_size: tuple[int, int],
    image_height: int,
    *,
    offsamples: int | None = None,
    tessellation: tuple[int, int] | None = None,
) -> Iterator[None]:
    """The model's visual settings that a rendering context reads when it is made, set meanwhile.

    The offscreen buffer is ``buffer_size`` (width, height); round geoms get ``tessellation``
    (slices, stacks), or for images up to :data:`COARSE_UP_TO_HEIGHT` tall :data:`COARSE_TESSELLATION`;
    ``offsamples`` replaces the multisampling when given. The model's own values come back after.
    """
    size, quality = model.vis.global_, model.vis.quality
    saved = (size.offwidth, size.offheight, quality.offsamples, quality.numslices, quality.numstacks)
    size.offwidth, size.offheight = buffer_size
    if offsamples is not None:
        quality.offsamples = offsamples
    if tessellation is None and image_height <= COARSE_UP_TO_HEIGHT:
        tessellation = COARSE_TESSELLATION
    if tessellation is not None:
        quality.numslices, quality.numstacks = tessellation
    try:
        yield
    finally:
        size.offwidth, size.offheight, quality.offsamples, quality.numslices, quality.numstacks = saved


def average_blocks(pixels: NDArray[np.uint8], factor: int) -> NDArray[np.uint8]:
    """Mean of every ``factor`` x ``factor`` block of an (H, W, C) image, rounded: (H/f, W/f, C).

    OpenCV's area interpolation, which for a whole-number factor is exactly this, ten times faster
    than the same sums in numpy.
    """
    if factor == 1:
        return pixels
    size = (pixels.shape[1] // factor, pixels.shape[0] // factor)
    return cv2.resize(pixels, size, interpolation=cv2.INTER_AREA).reshape(size[1], size[0], -1)


class SideBySideRenderer:
    """Renders ``count`` cameras of one image size in a row, supersampled, with one read-back.

    Args:
        model: the model (its visual settings and colours at render time apply).
        width, height: the size of each image, pixels.
        count: how many cameras one call renders.
        supersampling: samples per pixel along each axis, which replace the model's multisampling;
            1 draws with the model's multisampling (``vis.quality.offsamples``) instead.
        tessellation: (slices, stacks) of round geoms; None: :data:`COARSE_TESSELLATION` for images
            up to :data:`COARSE_UP_TO_HEIGHT` tall (see the module docstring), else the model's.
            The model's own settings are left as they were.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        width: int,
        height: int,
        count: int,
        supersampling: int = SUPERSAMPLING,
        *,
        tessellation: tuple[int, int] | None = None,
    ) -> None:
        self.width, self.height, self.count = width, height, count
        self._factor = supersampling
        self._model = model
        w, h = width * supersampling, height * supersampling
        # The offscreen buffer only as large as the row of images (see sensors.Cameras._renderer),
        # and single-sampled when supersampling: then the averaging below is the anti-aliasing.
        samples = 0 if supersampling > 1 else None
        with context_settings(model, (w * count, h), height, offsamples=samples, tessellation=tessellation):
            self._gl: Any = mujoco.GLContext(w * count, h)
            self._gl.make_current()
            self._context: Any = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
        self._scenes = [mujoco.MjvScene(model, maxgeom=10000) for _ in range(count)]
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._perturb = mujoco.MjvPerturb()
        self._samples = np.empty((h, w * count, 3), dtype=np.uint8)

    def render(
        self, data: mujoco.MjData, cameras: Sequence[str], option: mujoco.MjvOption
    ) -> list[NDArray[np.uint8]]:
        """RGB images (H, W, 3) of ``cameras`` (exactly ``count`` of them), drawn with ``option``."""
        if len(cameras) != self.count:
            raise ValueError(f"this renderer draws {self.count} cameras at once, not {len(cameras)}")
        self._gl.make_current()
        w, h = self.width * self._factor, self.height * self._factor
        for i, (camera, scene) in enumerate(zip(cameras, self._scenes, strict=True)):
            self._camera.fixedcamid = self._model.cam(camera).id
            mujoco.mjv_updateScene(
                self._model, data, option, self._perturb, self._camera, mujoco.mjtCatBit.mjCAT_ALL, scene
            )
            mujoco.mjr_render(mujoco.MjrRect(i * w, 0, w, h), scene, self._context)
        mujoco.mjr_readPixels(self._samples, None, mujoco.MjrRect(0, 0, w * self.count, h), self._context)
        row = average_blocks(self._samples, self._factor)[::-1]  # OpenGL's rows run bottom to top
        return [row[:, i * self.width : (i + 1) * self.width].copy() for i in range(self.count)]

    def close(self) -> None:
        """Free the GL resources (as ``mujoco.Renderer.close`` does: in this renderer's own context)."""
        if getattr(self, "_context", None) is not None:
            with self._gl.as_current():
                self._context.free()
            self._gl.free()
            self._context = None

    def __del__(self) -> None:
        # Left to the garbage collector, MuJoCo would free the MjrContext in whichever GL context
        # is current, which deletes that context's buffers of the same names: another renderer's.
        self.close()
