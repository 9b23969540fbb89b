"""The live view's page in a real headless browser (Debian's chromium, driven by playwright) during a
`galley run --view`: it loads, the robot moves between two screenshots, a step's verdict appears."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "no /usr/bin/chromium (apt-get install chromium; scripts/test.sh does)", allow_module_level=True
    )
pytest.importorskip("foxglove", reason="the live view needs foxglove-sdk (requirements.txt)")
sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (requirements-dev.txt)")

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_page_shows_the_robot_moving_and_the_steps_verdict(tmp_path):
    port = free_port()
    run = subprocess.Popen(
        [
            sys.executable, "-m", "galley_cli.main", "run", "Move the bowl to the green zone",
            "--plan", "move to the blue zone", "--out", str(tmp_path / "run"), "--view", str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            for _ in range(600):  # the command starts its server after a few seconds
                try:
                    page.goto(f"http://127.0.0.1:{port}/", timeout=2000)
                    break
                except sync_api.Error:
                    page.wait_for_timeout(100)
            assert page.title() == "galley live view"
            page.wait_for_function("document.getElementById('canvas').dataset.robot", timeout=120_000)
            first = page.eval_on_selector("#canvas", "c => c.dataset.robot")
            page.screenshot(path=str(tmp_path / "first.png"))
            # The robot has moved 5 cm on the page (however slowly a loaded machine runs it).
            x0, y0 = map(float, first.split(","))
            page.wait_for_function(
                "([x0, y0]) => { const [x, y] = document.getElementById('canvas').dataset.robot"
                ".split(',').map(Number); return (x - x0) ** 2 + (y - y0) ** 2 > 0.05 ** 2; }",
                arg=[x0, y0],
                timeout=120_000,
            )
            page.screenshot(path=str(tmp_path / "second.png"))
            second = page.eval_on_selector("#canvas", "c => c.dataset.robot")
            x1, y1 = map(float, second.split(","))
            assert (x1 - x0) ** 2 + (y1 - y0) ** 2 > 0.05**2, (first, second)
            assert (tmp_path / "first.png").read_bytes() != (tmp_path / "second.png").read_bytes()
            page.wait_for_selector("#plan li[data-verdict='pass']", timeout=120_000)
            assert "move to the blue zone" in page.inner_text("#plan")
            assert "pass" in page.inner_text("#plan li[data-verdict='pass']")
            page.screenshot(path=str(tmp_path / "verdict.png"))
            browser.close()
    finally:
        out, _ = run.communicate(timeout=300)
    assert run.returncode == 0, out
