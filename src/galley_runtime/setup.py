"""galley_runtime: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from setuptools import find_packages, setup

package_name = "galley_runtime"

setup(
    name="galley-runtime",
    version="0.1.0",
    description="galley's node runtime: node declaration, messages, QoS, both hosts, recording and replay",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={package_name: ["py.typed", "interfaces/*/action/*.action", "view/static/*"]},
    install_requires=["galley-core", "numpy>=1.24", "pyyaml>=5.4", "rosbags>=0.11.9,<0.12"],
    extras_require={
        "hdf5": ["h5py>=3.8"],  # recording.hdf5: HDF5 episodes beside the bag
        "repair": ["mcap>=1.6"],  # recording.repair of a killed recording's .mcap file
        "view": ["foxglove-sdk>=0.30,<0.31", "opencv-python-headless>=4.8"],  # the live view (--view)
    },
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    zip_safe=False,
)
