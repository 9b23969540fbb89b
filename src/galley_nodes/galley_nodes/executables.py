"""Console entry points, one per registered node: ``ros2 run galley_nodes <node>``.

``setup.py`` installs an executable for every name in :data:`galley_nodes.registry.NODES`, each
pointing at ``galley_nodes.executables:<name>``; this module makes those attributes on first
use (PEP 562), so adding a node to the registry is all it takes.

The nodes that need torch or MuJoCo come with an extra of galley-nodes each (:data:`EXTRAS`); their
executables are installed with the others, and say which extra to install when it is missing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from galley_nodes.registry import NODES, load_node_class

#: Node -> the extra of galley-nodes that installs what its module imports (setup.py's extras_require).
EXTRAS: dict[str, str] = {"task_planner": "planner", "diffusion_policy": "policy", "sim": "sim"}

_NO_EXTRA = (
    "galley: the node {name} needs galley-nodes[{extra}] ({err}).\n"
    "Fix: pip install 'galley-nodes[{extra}]', or under ROS 2 build galley_learning and galley_sim "
    "in this workspace too (colcon build)"
)

_NO_ROS = (
    "galley: {name} runs under ROS 2, but rclpy is not importable ({err}).\n"
    "Fix: source your ROS 2 setup (e.g. /opt/ros/jazzy/setup.bash) and this workspace's "
    "install/setup.bash, or run the nodes without ROS 2 in the embedded host: galley demo"
)


def _executable(name: str) -> Callable[[], int]:
    def main() -> int:
        try:
            from galley_runtime.ros2.host import run_node  # noqa: PLC0415 (optional: rclpy)
        except ImportError as err:
            print(_NO_ROS.format(name=name, err=err), file=sys.stderr)
            return 2
        try:
            cls = load_node_class(name)
        except ModuleNotFoundError as err:
            if name not in EXTRAS:
                raise
            print(_NO_EXTRA.format(name=name, extra=EXTRAS[name], err=err), file=sys.stderr)
            return 2
        return run_node(cls)

    main.__name__ = name
    main.__doc__ = f"Run the galley node {name!r} under ROS 2."
    return main


def __getattr__(name: str) -> Callable[[], int]:
    if name in NODES:
        return _executable(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
