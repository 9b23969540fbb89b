#!/usr/bin/env bash
# Set up (scripts/setup.sh), then lint, format check, type check the core, build the documentation
# site (mkdocs.yml; no network needed), and run the tests.
# Tests that need ROS 2 (rclpy) skip with a reason unless a ROS 2 environment is sourced.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# The live view's page is tested in Debian's chromium (test/galley_runtime/view/test_page.py, which
# skips with the reason where it is missing): install it where apt-get can.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "test: apt-get install chromium (the live view's page test)"
    apt-get install -y -qq chromium >/dev/null \
        || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
        || echo "test: chromium not installed; the page test skips"
fi
echo "test: ruff check"
.venv/bin/ruff check src test launch bench docs/hooks
echo "test: ruff format --check"
.venv/bin/ruff format --check src test launch bench docs/hooks
echo "test: mypy (galley_core)"
.venv/bin/mypy
echo "test: mkdocs build --strict (docs/, its reference generated from the code)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict  # not --quiet: it hides the warnings --strict fails on
echo "test: pytest"
.venv/bin/python -m pytest "$@"
