"""galley's built-in simulator: MuJoCo physics of kitchen scenes with galley's mobile manipulator.

MuJoCo picks its OpenGL backend when it is first imported, from ``MUJOCO_GL``. Unless the user
set it, galley chooses a headless one here: EGL where libEGL is installed (GPU or Mesa), else
OSMesa (software) where libOSMesa is, so that rendering works without a display either way.
``galley doctor`` tells which backends work on this machine.
"""

import ctypes.util
import os


def _headless_backend() -> str:
    if ctypes.util.find_library("EGL"):
        return "egl"
    if ctypes.util.find_library("OSMesa"):
        return "osmesa"
    return "egl"  # neither found: EGL's error names the library to install


if "MUJOCO_GL" not in os.environ:
    os.environ["MUJOCO_GL"] = _headless_backend()
    if os.environ["MUJOCO_GL"] == "osmesa":
        os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")

__version__ = "0.1.0"
