"""Nodes under ROS 2 need neither rosbags nor the embedded host."""

from __future__ import annotations

import subprocess
import sys


def test_the_ros2_path_imports_no_rosbags():
    code = (
        "import sys\n"
        "import galley_nodes.executables, galley_runtime.conversions\n"
        "from galley_nodes.registry import NODES, load_node_class\n"
        "for name in NODES: load_node_class(name)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rosbags', 'galley_runtime.embedded'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
