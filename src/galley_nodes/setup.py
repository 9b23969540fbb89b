"""galley_nodes: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

import ast
from pathlib import Path

from setuptools import find_packages, setup

package_name = "galley_nodes"


def node_names() -> list[str]:
    """The node names of galley_nodes/stack.py's NODES, read without importing the package."""
    tree = ast.parse(Path(__file__).with_name(package_name).joinpath("stack.py").read_text())
    for stmt in tree.body:
        if isinstance(stmt, ast.AnnAssign) and getattr(stmt.target, "id", "") == "NODES":
            return sorted(ast.literal_eval(call.args[0]) for call in stmt.value.elts)
    raise RuntimeError("galley_nodes/stack.py has no NODES table")


setup(
    name="galley-nodes",
    version="0.1.0",
    description="galley's nodes, the stack description and their ros2 run executables",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={package_name: ["py.typed"]},
    # The controllers, the monitor and the recorder need neither torch nor MuJoCo; the three nodes
    # that do come with an extra each (executables.EXTRAS), so that a real robot or Isaac Sim
    # installs galley-nodes alone, and `pip install galley-nodes[all]` brings every node.
    install_requires=["galley-core", "galley-description", "galley-runtime", "numpy>=1.24"],
    extras_require={
        "planner": ["galley-learning"],  # task_planner: the VLM planner backends (torch)
        "policy": ["galley-learning[policy]"],  # diffusion_policy: Diffusion Policy (torch, diffusers)
        "sim": ["galley-sim"],  # sim: the built-in MuJoCo simulator as a node
        "hdf5": ["galley-runtime[hdf5]"],  # recorder's episode.h5 beside the bag (h5py)
        "all": ["galley-learning[policy]", "galley-sim", "galley-runtime[hdf5]"],
    },
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    entry_points={
        "console_scripts": [
            # One executable per node: `ros2 run galley_nodes <node>`.
            *(f"{name} = galley_nodes.executables:{name}" for name in node_names()),
        ],
    },
    zip_safe=False,
)
