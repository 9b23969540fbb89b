"""galley_sim: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from setuptools import find_packages, setup

package_name = "galley_sim"

setup(
    name="galley-sim",
    version="0.1.0",
    description="galley's built-in MuJoCo simulator: kitchen scenes and a mobile manipulator",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={package_name: ["py.typed"]},
    install_requires=[
        "galley-core",
        "galley-description",
        "galley-runtime",
        "mujoco>=3.3",
        "numpy>=1.24",
        "opencv-python-headless>=4.8",
    ],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    zip_safe=False,
)
