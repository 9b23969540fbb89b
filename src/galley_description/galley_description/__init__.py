"""galley's robot description: the MJCF model of galley_mm, as data, for everyone who reads it.

The simulator includes the model into every scene (:mod:`galley_sim.mjcf`), the arm controller and the
policy's frames read its kinematics (:func:`galley_core.manipulation.kinematics.load_arm`). This package
holds only the files and where they are, so that a package that reads the model (the controllers on a
real robot, say) needs neither MuJoCo nor the simulator. The ROS convention names such a package
``<robot>_description``; ``share/galley_description/models`` holds the same files for ROS 2 tools.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["MODELS_DIR", "ROBOT_XML"]

#: One folder per robot (mujoco_menagerie's layout): the model XML and a README.
MODELS_DIR = Path(__file__).resolve().parent / "models"

#: The robot description: the one file the simulator, the arm controller and the policy read.
ROBOT_XML = MODELS_DIR / "galley_mm" / "robot.xml"

__version__ = "0.1.0"
