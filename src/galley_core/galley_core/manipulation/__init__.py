"""Manipulation: arm kinematics from the robot description, RMPflow, and the pick-and-place machine.

* :mod:`.kinematics`: :func:`load_arm` reads the arm chain from MJCF; forward kinematics, Jacobians;
* :mod:`.rmpflow`: :class:`RmpFlow`, Riemannian motion policies combined and integrated to joint commands;
* :mod:`.phases`: :class:`PickPlaceConfig` and the ten phases of a pick and a place, with their targets;
* :mod:`.reach`: :class:`ArmReach`, where the arm reaches and how its wrist turns, the phases' geometry;
* :mod:`.pick_place`: :class:`PickPlace`, Kitchen-R's pick-and-place state machine that steps through them;
* :mod:`.poses`: the raised-cosine blend and top-down gripper orientations;
* :mod:`.gripper`: where the finger pads and the palm are from the tcp, as the grasp rules need it.
"""
