"""galley_mm's gripper as the grasp rules see it: the finger pads and the palm, measured from the tcp.

The robot description (galley_description's ``models/galley_mm/robot.xml``) is the source. The
grasp rules that need these numbers (the scene catalogue, the scene checks) run where no robot
file is read, and galley_core may not import galley_description (they share a floor), so the
numbers are written here once and ``test/galley_core/test_manipulation_gripper.py`` compiles
robot.xml with MuJoCo and checks each of them. Change the gripper there, and that test says what
to write here.

In robot.xml the gripper approaches along its link's x axis (down, in a top-down grasp): the palm
spans 0 to 0.04 m of it, the finger pads 0.045 to 0.125 m, and the tcp is at 0.11 m.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GALLEY_MM_GRIPPER", "GripperGeometry"]


@dataclass(frozen=True)
class GripperGeometry:
    """Where a parallel gripper's parts are, measured from its tool centre point (tcp).

    Attributes:
        pad_reach_m: how far the finger pads' tips reach past the tcp along the approach axis
            (below it, in a top-down grasp), metres.
        palm_above_tcp_m: from the tcp back to the palm's face along the approach axis (its
            underside, in a top-down grasp), metres.
        opening_m: the gap between the pads with both fingers fully open, metres.
    """

    pad_reach_m: float
    palm_above_tcp_m: float
    opening_m: float


#: galley_mm's gripper (robot.xml; checked against it by the test named in the module docstring).
GALLEY_MM_GRIPPER = GripperGeometry(pad_reach_m=0.015, palm_above_tcp_m=0.07, opening_m=0.08)
