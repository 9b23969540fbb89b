"""galley_cli: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from setuptools import find_packages, setup

package_name = "galley_cli"

setup(
    name="galley-cli",
    version="0.1.0",
    description="the galley command: run, eval, collect, train, plan, replay and the rest",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={package_name: ["py.typed"]},
    install_requires=[
        "galley-core",
        "galley-runtime",
        "galley-sim",
        "galley-learning",
        "galley-nodes[all]",
        "galley-episodes",
        "numpy>=1.24",
    ],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    entry_points={"console_scripts": ["galley = galley_cli.main:main"]},
    zip_safe=False,
)
