"""galley_description: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from pathlib import Path

from setuptools import find_packages, setup

package_name = "galley_description"
here = Path(__file__).resolve().parent
#: One data_files entry per robot folder: share/galley_description/models/<robot>/ for ROS 2 tools.
robots = sorted(p for p in (here / package_name / "models").iterdir() if p.is_dir())

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
            (
                f"share/{package_name}/models/{robot.name}",
                sorted(str(f.relative_to(here)) for f in robot.iterdir()),
            )
            for robot in robots
        ),
    ],
    zip_safe=False,
)
