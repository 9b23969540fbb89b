"""Action definitions: ``.action`` text split into the message types ROS 2 builds from it.

An action ``pkg/action/Name`` is three sections of ``.msg`` text separated by ``---`` lines: the
goal, the result and the feedback. rosidl turns them into ``Name_Goal``, ``Name_Result`` and
``Name_Feedback`` and wraps them in the messages that travel: ``Name_SendGoal_Request`` /
``_Response``, ``Name_GetResult_Request`` / ``_Response`` and ``Name_FeedbackMessage`` (the
feedback topic ``/<action>/_action/feedback``). :func:`action_message_texts` gives the same types,
as ``.msg`` text, for the embedded host to register with ``rosbags`` (whose store has no actions).

nav2_msgs' ComputePathToPose, FollowPath and NavigateToPose come from Nav2's jazzy branch; their
files under ``interfaces/nav2_msgs/action`` say where from. Under ROS 2 the installed nav2_msgs
package is used instead (its classes carry the same fields).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

__all__ = [
    "ACTION_PARTS",
    "INTERFACES_DIR",
    "action_files",
    "action_message_texts",
    "error_codes",
    "split_action",
]

#: Where the .action files the embedded host registers live: ``<pkg>/action/<Name>.action``.
INTERFACES_DIR = Path(__file__).resolve().parent / "interfaces"

#: The message types of one action, by the suffix of their names.
ACTION_PARTS = (
    "Goal",
    "Result",
    "Feedback",
    "SendGoal_Request",
    "SendGoal_Response",
    "GetResult_Request",
    "GetResult_Response",
    "FeedbackMessage",
)

_SEPARATOR = re.compile(r"^---\s*$", re.MULTILINE)
_CONSTANT = re.compile(r"^\s*(?:u?int(?:8|16|32|64))\s+([A-Z][A-Z0-9_]*)\s*=\s*(-?\d+)", re.MULTILINE)
_FIELD = re.compile(r"^\s*[A-Za-z]", re.MULTILINE)
#: What rosidl puts in a structure without fields (an empty feedback): IDL allows no empty struct.
_EMPTY = "uint8 structure_needs_at_least_one_member\n"


@cache
def action_files() -> dict[str, Path]:
    """``pkg/action/Name`` -> its ``.action`` file, of every action under :data:`INTERFACES_DIR`."""
    return {
        f"{path.parent.parent.name}/action/{path.stem}": path
        for path in sorted(INTERFACES_DIR.glob("*/action/*.action"))
    }


def split_action(text: str, type_name: str = "the action") -> tuple[str, str, str]:
    """The goal, result and feedback sections of ``.action`` text.

    Raises:
        ValueError: the text does not have exactly three sections.
    """
    sections = _SEPARATOR.split(text)
    if len(sections) != 3:
        raise ValueError(
            f"{type_name}: an .action file has three sections (goal, result, feedback) separated by "
            f"'---' lines; found {len(sections)}"
        )
    goal, result, feedback = sections
    return goal, result, feedback


def _with_member(section: str) -> str:
    fields = [line for line in section.splitlines() if _FIELD.match(line) and "=" not in line.split("#")[0]]
    return section if fields else section + "\n" + _EMPTY


def action_message_texts(type_name: str, text: str) -> dict[str, str]:
    """``.msg`` text of every message type of the action ``type_name`` (``pkg/action/Name``)."""
    goal, result, feedback = (_with_member(s) for s in split_action(text, type_name))
    uuid = "unique_identifier_msgs/msg/UUID goal_id\n"
    return {
        f"{type_name}_Goal": goal,
        f"{type_name}_Result": result,
        f"{type_name}_Feedback": feedback,
        f"{type_name}_SendGoal_Request": f"{uuid}{type_name}_Goal goal\n",
        f"{type_name}_SendGoal_Response": "bool accepted\nbuiltin_interfaces/msg/Time stamp\n",
        f"{type_name}_GetResult_Request": uuid,
        f"{type_name}_GetResult_Response": f"int8 status\n{type_name}_Result result\n",
        f"{type_name}_FeedbackMessage": f"{uuid}{type_name}_Feedback feedback\n",
    }


@cache
def error_codes(type_name: str) -> dict[str, int]:
    """The constants of an action's result section (Nav2's error codes), e.g. ``{"NO_VALID_PATH": 208}``.

    Raises:
        KeyError: no .action file of that name under :data:`INTERFACES_DIR`.
    """
    try:
        path = action_files()[type_name]
    except KeyError:
        known = ", ".join(action_files()) or "none"
        raise KeyError(f"no definition of the action {type_name!r}; known: {known}") from None
    _, result, _ = split_action(path.read_text(), type_name)
    return {name: int(value) for name, value in _CONSTANT.findall(result)}
