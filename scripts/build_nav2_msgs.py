#!/usr/bin/env python3
"""Build nav2_msgs' Python classes for rclpy from PyPI's ROS 2 Jazzy wheels, without colcon or ament.

PyPI's wheels (requirements-dev.txt) carry rclpy, the standard message packages and the rosidl
generators with their headers and libraries, but not nav2_msgs. This script does what
``rosidl_generate_interfaces`` would for galley's three Nav2 actions (ComputePathToPose,
FollowPath, NavigateToPose, from src/galley_runtime/galley_runtime/interfaces/nav2_msgs/action):
.action -> .idl (rosidl_adapter), C structs, introspection and Fast DDS type support, the type
support dispatch and the Python classes (rosidl generators), then compiles them with gcc and g++.
(The ``rosidl generate`` command does the same but stops on the wheels' duplicate entry points,
hence the generators' Python API here.)

    .venv/bin/python scripts/build_nav2_msgs.py --out build/nav2_msgs
    export PYTHONPATH=$PWD/build/nav2_msgs/py:$PYTHONPATH LD_LIBRARY_PATH=$PWD/build/nav2_msgs/lib

``--package galley_msgs`` builds galley's own interface package (src/galley_msgs: its messages and
the ``/task/execute`` action) the same way, for the checks over DDS of what uses it:

    .venv/bin/python scripts/build_nav2_msgs.py --package galley_msgs --out build/galley_msgs

LD_LIBRARY_PATH must be set before the process starts: the type support dispatch finds the Fast DDS
library through it. Needs gcc and g++. Under a full ROS 2 install use the distribution's
ros-<distro>-nav2-msgs instead; this is for machines with the wheels only (CI, laptops).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ACTIONS = REPO / "src" / "galley_runtime" / "galley_runtime" / "interfaces" / "nav2_msgs" / "action"
#: package -> (the folder holding its msg/ and action/ folders, the packages its types use)
PACKAGES = {
    "nav2_msgs": (
        ACTIONS.parent,
        ("geometry_msgs", "nav_msgs", "std_msgs", "builtin_interfaces", "unique_identifier_msgs",
         "action_msgs", "service_msgs"),
    ),
    "galley_msgs": (
        REPO / "src" / "galley_msgs",
        ("geometry_msgs", "std_msgs", "builtin_interfaces", "unique_identifier_msgs", "action_msgs",
         "service_msgs"),
    ),
}  # fmt: skip
PACKAGE = "nav2_msgs"  # set by main (--package)
DEPENDENCIES = PACKAGES[PACKAGE][1]
RUNTIME = (
    "fastcdr",
    "rcpputils",
    "rcutils",
    "rmw",
    "rosidl_dynamic_typesupport",
    "rosidl_runtime_c",
    "rosidl_runtime_cpp",
    "rosidl_typesupport_c",
    "rosidl_typesupport_fastrtps_c",
    "rosidl_typesupport_fastrtps_cpp",
    "rosidl_typesupport_interface",
    "rosidl_typesupport_introspection_c",
)


def generate(work: Path, prefix: Path) -> Path:
    """Generate the C and Python sources under ``work/gen``; returns that folder."""
    os.environ.setdefault("AMENT_PREFIX_PATH", str(prefix))
    # deferred: the rosidl generators come with the ROS 2 wheels, which this script is for.
    from rosidl_adapter.action import convert_action_to_idl  # noqa: PLC0415 (optional: rosidl)
    from rosidl_adapter.msg import convert_msg_to_idl  # noqa: PLC0415 (optional: rosidl)
    from rosidl_generator_c.cli import GenerateC  # noqa: PLC0415 (optional: rosidl)
    from rosidl_generator_py.cli import GeneratePython  # noqa: PLC0415 (optional: rosidl)
    from rosidl_typesupport_c.cli import GenerateCTypesupport  # noqa: PLC0415 (optional: rosidl)
    from rosidl_typesupport_fastrtps_c.cli import GenerateFastRTPSCTypesupport  # noqa: PLC0415 (optional: rosidl)
    from rosidl_typesupport_introspection_c.cli import (  # noqa: PLC0415 (optional: rosidl)
        GenerateIntrospectionCTypesupport,
    )

    idl_dir = work / "idl"
    files = []
    source = PACKAGES[PACKAGE][0]
    for kind, convert in (("msg", convert_msg_to_idl), ("action", convert_action_to_idl)):
        for path in sorted((source / kind).glob(f"*.{kind}")):
            convert(source, PACKAGE, Path(kind) / path.name, idl_dir / kind)
            files.append(f"{idl_dir}:{kind}/{path.stem}.idl")
    includes = [str(prefix / "share" / dep) for dep in DEPENDENCIES]
    typesupports = ["rosidl_typesupport_fastrtps_c", "rosidl_typesupport_introspection_c"]
    generators = {
        "c": GenerateC("c"),
        "introspection_c": GenerateIntrospectionCTypesupport("introspection_c"),
        "fastrtps_c": GenerateFastRTPSCTypesupport("fastrtps_c"),
        "typesupport_c": GenerateCTypesupport("c", typesupport_implementations=typesupports),
        "py": GeneratePython(
            "py", typesupport_implementations=["rosidl_typesupport_c", "rosidl_typesupport_introspection_c"]
        ),
    }
    gen = work / "gen"
    for name, generator in generators.items():
        (gen / name).mkdir(parents=True, exist_ok=True)
        generator.generate(PACKAGE, files, includes, gen / name)
    return gen


def compile_all(gen: Path, out: Path, prefix: Path) -> None:
    """Compile the generated sources into ``out/lib`` (C libraries) and ``out/py`` (the package)."""
    include = out / "include" / PACKAGE
    for part in ("c", "introspection_c", "fastrtps_c"):
        shutil.copytree(
            gen / part, include, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.c", "*.cpp")
        )
    lib, py = out / "lib", out / "py" / PACKAGE
    lib.mkdir(parents=True, exist_ok=True)
    py.mkdir(parents=True, exist_ok=True)
    numpy_include = subprocess.run(
        [sys.executable, "-c", "import numpy; print(numpy.get_include())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    flags = ["-shared", "-fPIC", "-O1", "-w", f"-I{out / 'include'}", f"-I{prefix / 'include'}"]
    flags += [f"-I{prefix / 'include' / p}" for p in (*DEPENDENCIES, *RUNTIME)]
    flags += [f"-I{sysconfig.get_paths()['include']}", f"-I{numpy_include}"]
    flags += [f"-L{prefix / 'lib'}", f"-L{lib}", f"-Wl,-rpath,{prefix / 'lib'}", f"-Wl,-rpath,{lib}"]

    def deps(kind: str) -> list[str]:
        return [f"-l{dep}__{kind}" for dep in DEPENDENCIES]

    def build(compiler: str, target: Path, sources: list[Path], libs: list[str]) -> None:
        if not sources:
            raise SystemExit(f"build_nav2_msgs: the generators wrote no sources for {target.name}")
        subprocess.run([compiler, *flags, "-o", str(target), *map(str, sources), *libs], check=True)

    source = PACKAGES[PACKAGE][0]
    kinds = [k for k in ("msg", "action") if any((source / k).glob(f"*.{k}"))]  # what the package has

    def sources(folder: str, pattern: str) -> list[Path]:
        return sorted(p for k in kinds for p in (gen / folder.format(k)).glob(pattern))

    own = f"-l{PACKAGE}__rosidl_generator_c"
    base = ["-lrosidl_runtime_c", "-lrcutils"]
    # (compiler, target, sources, libraries), in link order: each links the ones before it.
    steps = [
        ("gcc", lib / f"lib{PACKAGE}__rosidl_generator_c.so", sources("c/{}/detail", "*.c"),
         [*base, *deps("rosidl_generator_c")]),
        ("gcc", lib / f"lib{PACKAGE}__rosidl_typesupport_introspection_c.so",
         sources("introspection_c/{}/detail", "*.c"),
         [own, "-lrosidl_typesupport_introspection_c", *base, *deps("rosidl_typesupport_introspection_c")]),
        ("g++", lib / f"lib{PACKAGE}__rosidl_typesupport_fastrtps_c.so",
         sources("fastrtps_c/{}/detail", "*.cpp"),
         [own, "-lrosidl_typesupport_fastrtps_c", "-lfastcdr", "-lrmw", *base,
          *deps("rosidl_typesupport_fastrtps_c"), *deps("rosidl_generator_c")]),
        ("g++", lib / f"lib{PACKAGE}__rosidl_typesupport_c.so", sources("typesupport_c/{}", "*.cpp"),
         [own, "-lrosidl_typesupport_c", *base, *deps("rosidl_typesupport_c")]),
        ("gcc", lib / f"lib{PACKAGE}__rosidl_generator_py.so", sources("py/{}", "*_s.c"),
         [own, *base, *deps("rosidl_generator_py"), *deps("rosidl_generator_c")]),
        ("gcc", py / f"{PACKAGE}_s__rosidl_typesupport_c.so",
         sorted(gen.glob(f"py/_{PACKAGE}_s.ep.rosidl_typesupport_c.c")),
         [f"-l{PACKAGE}__rosidl_generator_py", f"-l{PACKAGE}__rosidl_typesupport_c", own, *base]),
    ]  # fmt: skip
    for compiler, target, found, libs in steps:
        build(compiler, target, found, libs)
    for kind in kinds:
        shutil.copytree(
            gen / "py" / kind, py / kind, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.c")
        )
    (py / "__init__.py").touch()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", choices=sorted(PACKAGES), default="nav2_msgs", help="what to build")
    parser.add_argument("--out", type=Path, help="output folder (default: build/<package>)")
    args = parser.parse_args(argv)
    global PACKAGE, DEPENDENCIES  # one build per process: the module's settings
    PACKAGE, DEPENDENCIES = args.package, PACKAGES[args.package][1]
    args.out = args.out or REPO / "build" / PACKAGE
    prefix = Path(sys.prefix)
    if not (prefix / "include" / "rosidl_runtime_c").is_dir():
        print(
            f"build_nav2_msgs: {prefix} has no rosidl headers; run it with the Python of a venv that has "
            "PyPI's ROS 2 wheels (scripts/setup.sh installs them)",
            file=sys.stderr,
        )
        return 2
    for compiler in ("gcc", "g++"):
        if shutil.which(compiler) is None:
            print(
                f"build_nav2_msgs: {compiler} is not installed; install it (apt install build-essential)",
                file=sys.stderr,
            )
            return 2
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix=f"{PACKAGE}_gen_") as work:
        compile_all(generate(Path(work), prefix), out, prefix)
    print(f"export PYTHONPATH={out / 'py'}:$PYTHONPATH LD_LIBRARY_PATH={out / 'lib'}:$LD_LIBRARY_PATH")
    return 0


if __name__ == "__main__":
    sys.exit(main())
