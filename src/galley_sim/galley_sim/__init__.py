"""galley's built-in simulator: MuJoCo physics of kitchen scenes with galley's mobile manipulator.

MuJoCo renders headless with EGL unless ``MUJOCO_GL`` says otherwise (``osmesa`` for software
rendering where EGL is missing; ``galley doctor`` tells which works).
"""

import os

# Before anything imports mujoco, which picks its GL backend at import.
os.environ.setdefault("MUJOCO_GL", "egl")

__version__ = "0.1.0"
