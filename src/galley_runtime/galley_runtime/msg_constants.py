"""The constants of galley_msgs' .msg files, for code that compares message fields with them.

rosbags and rclpy classes both carry these constants, but as attributes of a class that depends on
the host's message backend; nodes and the CLI compare plain integers, so they import them here.
A test checks every value against the .msg files.
"""

from __future__ import annotations

__all__ = [
    "ABORT",
    "ACTION_ACTIVE",
    "ACTION_CANCELED",
    "ACTION_FAILED",
    "ACTION_IDLE",
    "ACTION_SUCCEEDED",
    "ARM_PICK",
    "ARM_PLACE",
    "ARM_STOP",
    "EPISODE_DONE",
    "STEP_FAILED",
    "STEP_STARTED",
    "STEP_SUCCEEDED",
]

# galley_msgs/msg/EpisodeEvent: kind
STEP_STARTED, STEP_SUCCEEDED, STEP_FAILED, ABORT, EPISODE_DONE = range(5)

# galley_msgs/msg/ArmGoal: action
ARM_PICK, ARM_PLACE, ARM_STOP = range(3)

# galley_msgs/msg/ActionStatus: state
ACTION_IDLE, ACTION_ACTIVE, ACTION_SUCCEEDED, ACTION_FAILED, ACTION_CANCELED = range(5)
