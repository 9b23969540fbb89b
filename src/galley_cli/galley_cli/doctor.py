"""``galley doctor``: what this machine can run, and how to fix what is missing.

Checks the Python version, galley's packages and dependencies, whether rclpy (ROS 2) imports,
whether MuJoCo renders headless (EGL first, then OSMesa if EGL fails, each in a fresh process
because MuJoCo picks its GL backend at import), which CPU features llama.cpp was built for and
whether this CPU has them (in a fresh process: a build for another CPU crashes), and whether an
NVIDIA GPU is visible. Required pieces fail the
command (exit status 1); optional ones only say what they would enable and how to get them.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Check", "add_parser", "llama_build_check", "run_checks"]

_RENDER_SCRIPT = """
import mujoco
model = mujoco.MjModel.from_xml_string(
    '<mujoco><worldbody><light pos="0 0 2"/><geom type="sphere" size="0.2" rgba="1 0 0 1"/>'
    '<camera name="c" pos="0 -1 0" xyaxes="1 0 0 0 0 1"/></worldbody></mujoco>')
data = mujoco.MjData(model)
mujoco.mj_forward(model, data)
renderer = mujoco.Renderer(model, 32, 32)
renderer.update_scene(data, camera="c")
image = renderer.render()
assert image.shape == (32, 32, 3) and image[..., 0].max() > 0, "rendered an empty image"
print("rendered")
"""


@dataclass
class Check:
    """One line of the report."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _check_python() -> Check:
    v = sys.version_info
    ok = v >= (3, 10)
    return Check(
        "python",
        ok,
        f"{v.major}.{v.minor}.{v.micro} at {sys.executable}",
        "" if ok else "use Python 3.10 or newer",
    )


def _check_distribution(dist: str, module: str, *, required: bool, fix: str) -> Check:
    try:
        importlib.import_module(module)
    except ImportError as err:
        return Check(dist, False, f"does not import ({err})", fix, required)
    return Check(dist, True, _version(dist) or "installed (no package metadata)", required=required)


def _check_messages() -> Check:
    try:
        # the check reports a missing rosbags instead of failing on it
        from galley_runtime import rosbags_messages  # noqa: PLC0415 (optional: rosbags)

        path = rosbags_messages.find_galley_msg_dir()
        rosbags_messages.typestore()
    except Exception as err:
        return Check("galley_msgs", False, str(err).splitlines()[0], "pip install src/galley_msgs")
    return Check("galley_msgs", True, f"{len(list(path.glob('*.msg')))} message definitions in {path}")


def _check_ros2() -> Check:
    fix = (
        "to run nodes under ROS 2: source /opt/ros/jazzy/setup.bash (or humble), then colcon build "
        "this workspace and source install/setup.bash"
    )
    try:
        rclpy = importlib.import_module("rclpy")
    except ImportError as err:
        return Check(
            "ros2 (rclpy)",
            False,
            f"not importable ({err}); the embedded host runs without it",
            fix,
            required=False,
        )
    try:
        importlib.import_module("rosidl_runtime_py")
        importlib.import_module("tf2_ros")
    except ImportError as err:
        where = os.path.dirname(rclpy.__file__)
        return Check(
            "ros2 (rclpy)",
            False,
            f"rclpy from {where} imports (PyPI's wheels: the ROS 2 host's tests run on it), but not a full "
            f"ROS 2 ({err}): ros2 launch, tf2_ros and galley_msgs' classes are missing",
            fix,
            required=False,
        )
    distro = os.environ.get("ROS_DISTRO", "unknown distro")
    return Check(
        "ros2 (rclpy)", True, f"rclpy from {os.path.dirname(rclpy.__file__)} ({distro})", required=False
    )


def _check_render(backend: str, timeout_s: float) -> Check:
    env = dict(os.environ, MUJOCO_GL=backend)
    if backend == "osmesa":
        env["PYOPENGL_PLATFORM"] = "osmesa"
    elif backend == "egl":
        env["PYOPENGL_PLATFORM"] = "egl"
    fixes = {
        "egl": "apt-get install libegl1 libgl1 (GPU rendering also needs the NVIDIA driver's EGL)",
        "osmesa": "apt-get install libosmesa6 (software rendering on the CPU)",
    }
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RENDER_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Check(
            f"mujoco render ({backend})", False, f"timed out after {timeout_s:.0f} s", fixes[backend], False
        )
    if proc.returncode == 0 and "rendered" in proc.stdout:
        return Check(
            f"mujoco render ({backend})",
            True,
            f"headless rendering works: export MUJOCO_GL={backend}",
            required=False,
        )
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return Check(f"mujoco render ({backend})", False, last[:160], fixes[backend], False)


_LLAMA_SCRIPT = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"

#: llama.cpp's compile-time CPU features (llama_print_system_info) and the /proc/cpuinfo flag each needs.
_LLAMA_FEATURES = {
    "AVX": "avx", "AVX2": "avx2", "FMA": "fma", "F16C": "f16c", "BMI2": "bmi2", "AVX_VNNI": "avx_vnni",
    "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi", "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16", "AMX_INT8": "amx_int8",
}  # fmt: skip


def _cpu_flags() -> set[str] | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def _check_llama_cpp(timeout_s: float) -> Check:
    name, fix = "llama.cpp", "rm .venv/galley-llama-cpp-build.txt && scripts/setup.sh (a portable build)"
    if importlib.util.find_spec("llama_cpp") is None:
        return Check(
            name, False, "llama-cpp-python is not installed (the llama_cpp planner backend)", fix, False
        )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _LLAMA_SCRIPT],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Check(name, False, f"loading llama-cpp-python took over {timeout_s:g} s", fix, False)
    if proc.returncode != 0:
        died = f"signal {-proc.returncode}" if proc.returncode < 0 else f"status {proc.returncode}"
        return Check(
            name, False, f"loading llama-cpp-python failed ({died}): {proc.stderr.strip()[-160:]}", fix, False
        )
    return llama_build_check(proc.stdout, _cpu_flags())


def llama_build_check(system_info: str, cpu_flags: set[str] | None) -> Check:
    """The verdict on a llama.cpp build from its ``llama_print_system_info()`` and this CPU's flags."""
    fix = "rm .venv/galley-llama-cpp-build.txt && scripts/setup.sh (a portable build)"
    padded = f" {system_info.replace('|', ' | ')} "
    built = [f for f in _LLAMA_FEATURES if f" {f} = 1 " in padded]
    missing = [f for f in built if cpu_flags is not None and _LLAMA_FEATURES[f] not in cpu_flags]
    detail = f"built for {', '.join(built) or 'no vector extensions'}"
    if missing:
        return Check(
            "llama.cpp", False, f"{detail}; this CPU lacks {', '.join(missing)}: it will crash", fix, False
        )
    if any(f.startswith(("AVX512", "AMX", "AVX_VNNI")) for f in built):
        detail += " (a native build: it runs only on CPUs that have these)"
    return Check("llama.cpp", True, detail, required=False)


def _check_gpu() -> Check:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return Check(
            "gpu",
            False,
            "no NVIDIA GPU visible (nvidia-smi not found)",
            "training runs on the CPU; for a GPU install the NVIDIA driver",
            False,
        )
    proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False)
    gpus = [line for line in proc.stdout.splitlines() if line.startswith("GPU")]
    if proc.returncode != 0 or not gpus:
        return Check(
            "gpu",
            False,
            f"nvidia-smi found no GPU: {proc.stderr.strip()[:120]}",
            "check the NVIDIA driver",
            False,
        )
    return Check("gpu", True, "; ".join(gpus), required=False)


def run_checks(*, render: bool = True, render_timeout_s: float = 60.0) -> list[Check]:
    """Run every check, in report order."""
    pip_fix = "run scripts/setup.sh (or pip install -r requirements.txt)"
    checks = [
        _check_python(),
        *(
            _check_distribution(
                f"galley-{floor}",
                f"galley_{floor}",
                required=True,
                fix=f"run scripts/setup.sh (or pip install -e src/galley_{floor})",
            )
            for floor in ("core", "description", "runtime", "sim", "learning", "nodes", "episodes", "cli")
        ),
        _check_messages(),
    ]
    for dist, module in (("numpy", "numpy"), ("scipy", "scipy"), ("pyyaml", "yaml"), ("rosbags", "rosbags")):
        checks.append(_check_distribution(dist, module, required=True, fix=pip_fix))
    checks.append(
        _check_distribution("matplotlib", "matplotlib", required=False, fix=pip_fix + " (for plots)")
    )
    checks.append(
        _check_distribution(
            "numba", "numba", required=False, fix=pip_fix + " (without it Theta* runs ~100x slower)"
        )
    )
    for dist, module, what in (
        ("torch", "torch", "galley's planner and the diffusion policy"),
        ("diffusers", "diffusers", "the diffusion policy: galley train, eval --policy"),
        ("pyarrow", "pyarrow", "galley export-lerobot's parquet files"),
        ("av", "av", "galley export-lerobot's videos"),
        ("transformers", "transformers", "the transformers planner backend"),
        ("mcap", "mcap", "galley bag repair of a killed recording"),
    ):
        checks.append(_check_distribution(dist, module, required=False, fix=f"{pip_fix} ({what})"))
    checks.append(_check_ros2())
    mujoco = _check_distribution(
        "mujoco", "mujoco", required=False, fix="pip install mujoco (the built-in simulator)"
    )
    checks.append(mujoco)
    if mujoco.ok and render:
        # EGL first (GPU or Mesa), OSMesa only if EGL fails: the first that works is the one to use.
        for backend in ("egl", "osmesa"):
            checks.append(_check_render(backend, render_timeout_s))
            if checks[-1].ok:
                break
    checks.append(_check_llama_cpp(render_timeout_s))
    checks.append(_check_gpu())
    return checks


def _report(checks: list[Check]) -> str:
    lines = []
    width = max(len(c.name) for c in checks)
    for c in checks:
        mark = "ok" if c.ok else ("MISSING" if c.required else "absent")
        lines.append(f"  [{mark:^7}] {c.name:<{width}}  {c.detail}")
        if not c.ok and c.fix:
            lines.append(f"  {'':9} {'':<{width}}  fix: {c.fix}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    checks = run_checks(render=not args.no_render)
    failed = [c for c in checks if c.required and not c.ok]
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        print("galley doctor\n" + _report(checks))
        if failed:
            print(f"\n{len(failed)} required piece(s) missing: {', '.join(c.name for c in failed)}")
        else:
            print("\nThe embedded host can run. Optional pieces marked 'absent' say what they add.")
    return 1 if failed else 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check this machine: Python, packages, ROS 2, headless MuJoCo, GPU")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.add_argument("--no-render", action="store_true", help="skip the MuJoCo rendering checks")
    p.set_defaults(run=_run)
