"""galley_episodes: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from setuptools import find_packages, setup

package_name = "galley_episodes"

setup(
    name="galley-episodes",
    version="0.1.0",
    description="galley's episodes as a library: run one, evaluate a suite, collect training data",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={package_name: ["py.typed"]},
    install_requires=[
        "galley-core",
        "galley-runtime",
        "galley-sim",
        "galley-learning",
        "galley-nodes[all]",  # an episode runs the whole stack: simulator, planner and policy nodes
        "numpy>=1.24",
        "matplotlib>=3.7",  # topdown.png and metrics.png
        "opencv-python-headless>=4.8",  # video.mp4
    ],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    zip_safe=False,
)
