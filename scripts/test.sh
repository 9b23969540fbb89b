#!/usr/bin/env bash
# Set up (scripts/setup.sh), then lint, format check, type check the core, and run the tests.
# Tests that need ROS 2 (rclpy) skip with a reason unless a ROS 2 environment is sourced.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
echo "test: ruff check"
.venv/bin/ruff check src test launch bench
echo "test: ruff format --check"
.venv/bin/ruff format --check src test launch bench
echo "test: mypy (galley_core)"
.venv/bin/mypy
echo "test: pytest"
.venv/bin/python -m pytest "$@"
