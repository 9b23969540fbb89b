"""The policies that ship with galley, and what a ``--policy`` value names.

A shipped policy is a training run folder (as ``galley train --out RUN`` writes it) kept under
``galley_learning/policy/weights/<name>/``: ``policy.pt``, ``config.json``, ``stats.json``,
``params.yaml`` (the sensor settings it was trained with), ``report.json`` and the integrator's
``TRAINING.md`` (weights/README.md says more). ``galley eval --policy default``, ``galley run
--policy default``, ``ros2 launch launch/kitchen_sim.launch.py policy:=default`` and the
``diffusion_policy`` node's ``run`` parameter take either such a name or a run folder's path.

A run carries its sensor settings: ``RUN/params.yaml`` (the collection's camera size and rate, the
monitor's camera rate rules) is layered before the user's params files wherever the run acts
(:func:`layered_params`), so the policy sees the cameras it was trained on unless a user's file says
otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "DEFAULT_POLICY",
    "WEIGHTS",
    "PolicyNotFoundError",
    "layered_params",
    "resolve_policy",
    "run_params",
    "shipped_policies",
]

#: The folder of the shipped policies, one run folder per name.
WEIGHTS = Path(__file__).resolve().parent / "weights"
#: The name the documentation's commands use.
DEFAULT_POLICY = "default"
#: A run's sensor settings, copied from its collection by ``galley train``.
RUN_PARAMS = "params.yaml"


class PolicyNotFoundError(FileNotFoundError):
    """A ``--policy`` value names no shipped policy and no run folder holding ``policy.pt``."""


def shipped_policies(weights: Path | None = None) -> list[str]:
    """The names of the shipped policies (folders of ``weights`` holding ``policy.pt``), sorted."""
    root = WEIGHTS if weights is None else weights
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "policy.pt").is_file())


def resolve_policy(value: str | Path, weights: Path | None = None) -> Path:
    """The run folder a ``--policy`` value names: a shipped policy's name, else a path.

    A bare name (no path separator) of a shipped policy is that policy's folder under ``weights``
    (default :data:`WEIGHTS`), even where a folder of that name lies in the working directory
    (write ``./default`` for that one). Anything else is a path to a run folder.

    Raises:
        PolicyNotFoundError: a bare name that is neither shipped nor a folder here, or a folder without
            ``policy.pt`` (the message names the value and the fix).
    """
    text = str(value)
    root = WEIGHTS if weights is None else weights
    bare = bool(text) and "/" not in text and "\\" not in text and text not in (".", "..")
    if bare and (root / text / "policy.pt").is_file():
        return root / text
    path = Path(text).expanduser()
    if (path / "policy.pt").is_file():
        return path
    if bare and not path.exists():
        shipped = shipped_policies(root)
        have = f" (shipped: {', '.join(shipped)})" if shipped else ""
        raise PolicyNotFoundError(
            f"no shipped policy {text!r} in this galley{have}: train one with "
            f"galley train --data COLLECTION --out RUN, or give a run folder (--policy RUN)"
        )
    if not path.is_dir():
        raise PolicyNotFoundError(
            f"policy {text}: no such run folder; give a galley train run folder (RUN/policy.pt) "
            f"or a shipped policy's name ({', '.join(shipped_policies(root)) or 'none shipped'})"
        )
    raise PolicyNotFoundError(
        f"policy {text}: {path / 'policy.pt'} missing: train a policy with galley train --out {text}"
    )


def run_params(run: Path | None) -> list[Path]:
    """The run's own params file (``RUN/params.yaml``) where it has one: the sensors it was trained with."""
    if run is None:
        return []
    path = Path(run) / RUN_PARAMS
    return [path] if path.is_file() else []


def layered_params(run: Path | None, params: Sequence[Path]) -> list[Path]:
    """The params files a policy run acts under: ``RUN/params.yaml`` first, then ``params`` (which win).

    A file already in ``params`` is not layered twice (a caller that passes the layered list on).
    """
    given = [Path(p) for p in params]
    return [p for p in run_params(run) if p not in given] + given
