"""galley_learning: pip (through pyproject.toml) and colcon (ament_python) both build from this file."""

from setuptools import find_packages, setup

package_name = "galley_learning"
#: What a shipped policy's run folder installs (setuptools 59, colcon's on Humble, has no "**").
SHIPPED_POLICY_FILES = ("*/policy.pt", "*/*.json", "*/*.yaml", "*/*.md", "*/*.png", "*/*.csv")

setup(
    name="galley-learning",
    version="0.1.0",
    description="galley's planner backends, offline VLM planner, diffusion policy and LeRobot export",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[package_name, package_name + ".*"]),
    package_data={
        package_name: [
            "py.typed",
            "planners/weights/*.pt",
            "planners/weights/*.json",
            # the shipped policies: one run folder each (policy/weights/README.md), its checkpoint.pt
            # and dataset/ left out (training state, not what acting needs)
            *(f"policy/weights/{name}" for name in ("README.md", *SHIPPED_POLICY_FILES)),
        ]
    },
    install_requires=[
        "galley-core",
        "galley-description",
        "galley-runtime",
        "numpy>=1.24",
        "torch>=2.3",
        "httpx>=0.27",
    ],
    extras_require={
        # planners.images.TopDownRenderer renders the planner's training images with the simulator.
        "sim": ["galley-sim"],
        "policy": ["diffusers>=0.30", "scipy>=1.10", "opencv-python-headless>=4.8"],
        "lerobot": ["pyarrow>=15", "av>=15,<16"],
        "transformers": ["transformers>=5", "llguidance>=1.0"],
    },
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    zip_safe=False,
)
