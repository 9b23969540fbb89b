"""Stopping a command that runs episode workers: SIGTERM ends it as Ctrl-C does, and no worker
outlives its command, however that command ends (a scheduler's SIGTERM, or SIGKILL after it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie has ended; its parent has not reaped it


def _eval_with_workers(tmp_path: Path) -> tuple[subprocess.Popen[str], set[int]]:
    """``galley eval`` with two workers, once both are running episodes; returns it and them."""
    command = [sys.executable, "-m", "galley_cli.main", "eval", "--mode", "policy", "--episodes", "6"]
    proc = subprocess.Popen(
        [*command, "--workers", "2", "--out", str(tmp_path / "eval")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while len(workers) < 3 and time.monotonic() < deadline:  # two workers and the resource tracker
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
        workers = _children(proc.pid)
    assert len(workers) >= 3, "the workers did not start within 120 s"
    time.sleep(3.0)  # into their first episodes
    return proc, workers


def _gone(pids: set[int], seconds: float) -> set[int]:
    """The pids of ``pids`` still alive after waiting up to ``seconds`` for them to end."""
    deadline = time.monotonic() + seconds
    while (alive := {p for p in pids if _alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def test_sigterm_stops_an_evaluation_and_its_workers_as_ctrl_c_does(tmp_path: Path) -> None:
    proc, workers = _eval_with_workers(tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "galley eval: terminated"
    assert "Traceback" not in err
    assert not _gone(workers, 10.0), "workers outlived galley eval"


def test_no_worker_outlives_a_killed_command(tmp_path: Path) -> None:
    proc, workers = _eval_with_workers(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)  # nothing of galley's runs: the kernel ends the workers
    proc.communicate(timeout=30)
    assert not _gone(workers, 10.0), "workers outlived a killed galley eval"
