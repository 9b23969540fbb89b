"""galley_core: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from setuptools import find_packages, setup

package_name = "galley_core"

setup(
    name="galley-core",
    version="0.1.0",
    description="galley's algorithms and data types: plain Python, no ROS 2, no simulator",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={package_name: ["py.typed"]},
    install_requires=["numpy>=1.24", "scipy>=1.10", "numba>=0.58", "pyyaml>=5.4"],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    zip_safe=True,
)
