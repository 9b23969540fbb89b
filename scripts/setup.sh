#!/usr/bin/env bash
# Set up galley without ROS 2: a virtual environment in .venv with the pinned dependencies and
# galley's packages (galley_core and galley_nodes editable, galley_msgs' .msg files installed).
# Safe to run again. Needs Python 3.10+ with venv (PYTHON=... to choose the interpreter).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "setup: galley needs Python 3.10 or newer; '$PYTHON' is $("$PYTHON" --version 2>&1 || echo missing)." >&2
    echo "setup: fix: install Python 3.10+ and run PYTHON=/path/to/python3 scripts/setup.sh" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $("$PYTHON" --version)"
    "$PYTHON" -m venv .venv
fi
echo "setup: installing pinned dependencies (requirements-dev.txt)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
echo "setup: installing galley_core, galley_nodes, galley_sim, galley_msgs"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    -e src/galley_core -e src/galley_nodes -e src/galley_sim -e src/galley_isaac -e src/galley_learning ./src/galley_msgs
echo "setup: done; the galley command is .venv/bin/galley"
