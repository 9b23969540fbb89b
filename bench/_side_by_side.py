"""Run a bench's measurement on the code of another git commit, in a subprocess, beside this tree's.

Used by ``bench/episode.py --baseline REF`` and ``bench/collect.py --baseline REF``: the baseline
is checked out as a temporary ``git worktree`` (detached, removed afterwards, nothing of it kept),
and each measurement runs ``python <this bench> --worker ...`` in a fresh process whose
PYTHONPATH puts that checkout's ``src/galley_*`` packages first and whose working directory is
the checkout (so ``./config`` is its own). The current tree runs the same way, so both sides pay
the same process start-up, and the caller interleaves them (old, new, old, new, ...) to share
the machine's noise. The worker prints its result as the last line of stdout, one JSON object.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: The code this round's episode work started from (main on 2026-11-28, before issue 35 item 3).
DEFAULT_BASELINE = "321ef84"


def packages_path(root: Path) -> str:
    """PYTHONPATH that imports the galley packages of the checkout at ``root``."""
    return os.pathsep.join(
        str(p) for p in sorted((root / "src").glob("galley_*")) if p.is_dir() and p.name != "galley_msgs"
    )


@contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """A temporary detached worktree of ``ref``; exits with a clear line when ``ref`` is unknown."""
    try:
        subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError:
        sys.exit(f"--baseline {ref!r} is not a commit of this repository; give a hash or branch")
    folder = Path(tempfile.mkdtemp(prefix="galley_baseline_"))
    tree = folder / "tree"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tree), ref],
        check=True,
        capture_output=True,
    )
    try:
        yield tree
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


def run_worker(script: Path, root: Path, args: Sequence[str]) -> dict[str, Any]:
    """Run ``script --worker args`` on the code at ``root``; its last stdout line, parsed."""
    env = dict(os.environ, PYTHONPATH=packages_path(root))
    env.pop("GALLEY_CONFIG_DIR", None)
    done = subprocess.run(
        [sys.executable, str(script), "--worker", *args],
        check=False,
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"the worker on {root} failed (exit {done.returncode}):\n{tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def comparable(record: dict[str, Any], machine_fields: Sequence[str]) -> dict[str, Any]:
    """``record`` less the fields that depend on the machine, paths made checkout-relative.

    An episode's record names files by absolute path (its scene file); the two sides run in
    different checkouts, so the checkout's own folder (the worker's working directory) is
    written as ``<checkout>`` for the comparison.
    """
    root = str(Path.cwd().resolve())
    return {
        k: v.replace(root, "<checkout>") if isinstance(v, str) else v
        for k, v in record.items()
        if k not in machine_fields
    }
