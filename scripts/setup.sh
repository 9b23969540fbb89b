#!/usr/bin/env bash
# Set up galley without ROS 2: a virtual environment in .venv with the pinned dependencies and
# galley's packages (editable, from the bottom floor up; galley_msgs' .msg files installed).
# Safe to run again. Needs Python 3.11+ with venv (mujoco 4 has no Python 3.10 build) (PYTHON=... to choose the interpreter).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup: galley needs Python 3.11 or newer (mujoco 4.0 has no build for older ones); '$PYTHON' is $("$PYTHON" --version 2>&1 || echo missing)." >&2
    echo "setup: fix: install Python 3.11+ and run PYTHON=/path/to/python3 scripts/setup.sh" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $("$PYTHON" --version)"
    "$PYTHON" -m venv .venv
fi
echo "setup: installing pinned dependencies (requirements-dev.txt, requirements-docs.txt, requirements-cluster.txt)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -r requirements-docs.txt \
    -r requirements-cluster.txt

# llama-cpp-python compiles llama.cpp. By default ggml builds for the CPU it is built on
# (-march=native), and a build made on one x86-64 machine can crash with SIGSEGV/SIGILL on the next
# (seen: AVX-512 and AMX code paths on an Intel Xeon). So it is built for x86-64 with AVX2 and FMA,
# which every machine of ours has, and nothing newer. GALLEY_LLAMA_CMAKE_ARGS replaces the flags
# (docs/tutorials/first-run.md: "A native llama.cpp build"); the flags a build used are kept beside
# it, and a change of flags rebuilds it, bypassing pip's wheel cache, which does not know about
# CMAKE_ARGS.
PORTABLE_LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF \
-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=OFF \
-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
-DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
if [ "$(uname -m)" != "x86_64" ]; then
    PORTABLE_LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF"
fi
LLAMA_CMAKE_ARGS=${GALLEY_LLAMA_CMAKE_ARGS:-$PORTABLE_LLAMA_CMAKE_ARGS}
LLAMA_REQUIREMENT=$(grep -E '^llama-cpp-python' requirements-llama.txt)
LLAMA_STAMP=".venv/galley-llama-cpp-build.txt"
LLAMA_WANTED="$LLAMA_REQUIREMENT $LLAMA_CMAKE_ARGS"
if [ "$(cat "$LLAMA_STAMP" 2>/dev/null)" != "$LLAMA_WANTED" ] \
        || ! .venv/bin/python -c 'import llama_cpp' 2>/dev/null; then
    echo "setup: building $LLAMA_REQUIREMENT from source (10 to 20 minutes) with CMAKE_ARGS=$LLAMA_CMAKE_ARGS"
    rm -f "$LLAMA_STAMP"
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
        .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-cache-dir \
        --no-binary llama-cpp-python --force-reinstall --no-deps -r requirements-llama.txt
    echo "$LLAMA_WANTED" > "$LLAMA_STAMP"
fi
echo "setup: installing galley_core, galley_description, galley_runtime, galley_sim, galley_learning, galley_nodes, galley_episodes, galley_cli, galley_isaac, galley_msgs"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    -e src/galley_core -e src/galley_description -e src/galley_runtime -e src/galley_sim -e src/galley_learning \
    -e src/galley_nodes -e src/galley_episodes -e src/galley_cli -e src/galley_isaac ./src/galley_msgs
echo "setup: done; the galley command is .venv/bin/galley"
