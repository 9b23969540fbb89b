"""galley_isaac: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from setuptools import find_packages, setup

package_name = "galley_isaac"

setup(
    name="galley-isaac",
    version="0.1.0",
    description="galley's Isaac Sim bridge: declarative ROS 2 action graphs with galley's topic contract",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={package_name: ["py.typed"]},
    # Plain Python outside Isaac Sim; inside it, omni.graph.core and usdrt come with Isaac Sim.
    install_requires=["galley-core", "pyyaml>=5.4"],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    zip_safe=False,
)
