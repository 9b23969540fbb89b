"""galley_description: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from pathlib import Path

from setuptools import find_packages, setup

package_name = "galley_description"
models = Path(package_name, "models")

setup(
    name="galley-description",
    version="0.1.0",
    description="galley's robot description: the MJCF model of the galley_mm mobile manipulator, as data",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={package_name: ["py.typed", "models/*/*.xml", "models/*/*.md"]},
    # Data only: reading the model is galley_core's (kinematics) or MuJoCo's (galley_sim) business.
    install_requires=[],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        *(
            (f"share/{package_name}/models/{robot.name}", sorted(str(f) for f in robot.iterdir()))
            for robot in sorted(models.iterdir())
            if robot.is_dir()
        ),
    ],
    zip_safe=False,
)
