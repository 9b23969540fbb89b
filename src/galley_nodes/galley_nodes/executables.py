"""Console entry points, one per registered node: ``ros2 run galley_nodes <node>``.

``setup.py`` installs an executable for every name in :data:`galley_nodes.registry.NODES`, each
pointing at ``galley_nodes.executables:<name>``; this module makes those attributes on first
use (PEP 562), so adding a node to the registry is all it takes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from galley_nodes.registry import NODES, load_node_class

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
        return run_node(load_node_class(name))

    main.__name__ = name
    main.__doc__ = f"Run the galley node {name!r} under ROS 2."
    return main


def __getattr__(name: str) -> Callable[[], int]:
    if name in NODES:
        return _executable(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
