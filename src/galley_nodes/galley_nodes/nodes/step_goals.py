"""How the task executor hands a step to the node that executes it, and undoes a failed step.

A move goes to the base through :class:`~galley_nodes.nodes.base_mover.BaseMover` (navigate_to_pose
or /goal_pose); a pick or a place goes out as a galley_msgs/ArmGoal on /arm/goal, a place with the
spot of the zone it puts the object down on (:func:`galley_core.tasks.executor.place_target`).
After a failed step, ``teleport_on_failure`` leaves the world as the step should have, through
/sim/teleport (Kitchen-R's evaluation goes on from there). What the step achieved is judged by the
executor, not here.
"""

from __future__ import annotations

from typing import Any

from galley_core.geometry import Pose2D, quaternion_from_yaw
from galley_core.scene import Scene
from galley_core.tasks.executor import move_goal, place_target
from galley_core.tasks.grammar import Step
from galley_core.tasks.judging import robot_zone
from galley_nodes.nodes.base_mover import BaseMover
from galley_nodes.nodes.ground_truth import TfGroundTruth
from galley_runtime.conversions import pose_msg
from galley_runtime.msg_constants import ARM_PICK, ARM_PLACE
from galley_runtime.node import Node

__all__ = ["StepGoals"]


class StepGoals:
    """Sends each step's goal; :attr:`place_goal` is where the running place puts its object.

    Args:
        node: the executor; it publishes ``arm/goal`` and ``sim/teleport`` and has ``map_frame``
            and ``base_frame`` in its config.
        scene: zones and objects.
        truth: ground truth, read for a place: where the base and the other objects are.
        mover: drives the base for a move step.
    """

    def __init__(self, node: Node, scene: Scene, truth: TfGroundTruth, mover: BaseMover) -> None:
        self._node = node
        self._scene = scene
        self._truth = truth
        self._mover = mover
        #: (x, y, z) in the map frame, metres, of the object's bottom centre once placed.
        self.place_goal: tuple[float, float, float] | None = None

    def send(self, step: Step) -> None:
        """Send ``step``'s goal, stamped now in the map frame."""
        node = self._node
        if step.action == "move":
            goal = move_goal(self._scene, step.target)
            self._mover.start(
                node.msg("geometry_msgs/msg/PoseStamped", header=self._header(), pose=pose_msg(goal))
            )
        elif step.action == "pick":
            node.publish(
                "arm/goal",
                node.msg(
                    "galley_msgs/msg/ArmGoal", header=self._header(), action=ARM_PICK, object_name=step.target
                ),
            )
        else:
            base = self._truth.base_pose()
            poses = self._truth.object_poses()
            others = {n: (t.translation[0], t.translation[1]) for n, t in poses.items()}
            zone = robot_zone(self._scene, base)
            self.place_goal = place_target(self._scene, zone, step.target, others, (base.x, base.y))
            x, y, z = self.place_goal
            # Put it down with the yaw it has in the gripper: no wrist rotation is asked for.
            held = poses.get(step.target)
            q = quaternion_from_yaw(held.yaw() if held is not None else 0.0)
            target = {
                "header": self._header(),
                "pose": {
                    "position": {"x": x, "y": y, "z": z},
                    "orientation": dict(zip("xyzw", map(float, q), strict=True)),
                },
            }
            node.publish(
                "arm/goal",
                node.msg(
                    "galley_msgs/msg/ArmGoal",
                    header=self._header(),
                    action=ARM_PLACE,
                    object_name=step.target,
                    target_pose=target,
                ),
            )

    def _header(self) -> dict[str, Any]:
        return {"stamp": self._node.stamp(), "frame_id": self._node.config.map_frame}

    def teleport_after(self, step: Step) -> None:
        """Leave the world as the failed ``step`` should have (``teleport_on_failure``)."""
        node = self._node
        if step.action == "move":
            pose, frame, z = move_goal(self._scene, step.target), node.config.base_frame, 0.0
        elif step.action == "pick":  # the object into the gripper, carried (the pose is not read)
            pose, frame, z = Pose2D(0.0, 0.0, 0.0), f"gripper/{step.target}", 0.0
        else:  # place: the object onto its target
            assert self.place_goal is not None
            x, y, z = self.place_goal
            pose, frame = Pose2D(x, y, 0.0), f"object/{step.target}"
        msg = pose_msg(pose)
        msg.position.z = z
        node.publish(
            "sim/teleport",
            node.msg(
                "geometry_msgs/msg/PoseStamped", header={"stamp": node.stamp(), "frame_id": frame}, pose=msg
            ),
        )
        node.log.info(f"teleported {frame} to where {str(step)!r} should have left it")
