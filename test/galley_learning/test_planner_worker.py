"""Planner backends in a worker process: a crash or a hang in native code fails a plan, not the caller."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from galley_core.language.planning import PlanningError
from galley_core.tasks.grammar import valid_steps
from galley_core.tasks.replanning import PlanContext
from galley_learning.planners import make_planner
from galley_learning.planners.worker import PlannerProcess


def test_a_backend_that_segfaults_fails_the_plan_with_the_library_and_the_fix(misbehaving_backends, kitchen):
    planner = PlannerProcess(misbehaving_backends.Segfaulting, backend="llama_cpp")
    first = planner.pid
    with pytest.raises(PlanningError) as err:
        planner.plan("Move the bowl to the green zone.", None, kitchen)
    assert err.value.kind == "unavailable"
    assert "SIGSEGV" in err.value.reason and "llama-cpp-python" in err.value.reason
    assert "scripts/setup.sh" in err.value.reason  # the fix
    # The next instruction gets a fresh worker (which dies the same way), and this process lives on.
    with pytest.raises(PlanningError, match="SIGSEGV"):
        planner.plan("Move the cup to the red zone.", None, kitchen)
    assert planner.pid is None or planner.pid != first
    planner.close()


def test_a_backend_that_dies_while_loading_is_unavailable(misbehaving_backends):
    with pytest.raises(PlanningError) as err:
        PlannerProcess(misbehaving_backends.SegfaultingAtLoad, backend="llama_cpp")
    assert err.value.kind == "unavailable" and "while loading" in err.value.reason


def test_a_backend_that_hangs_is_stopped_after_its_time_limit(misbehaving_backends, kitchen):
    planner = PlannerProcess(
        misbehaving_backends.Hanging, backend="llama_cpp", timeout_s=1.0, start_timeout_s=60.0
    )
    worker = planner.pid
    started = time.monotonic()
    with pytest.raises(PlanningError) as err:
        planner.plan("Move the bowl to the green zone.", None, kitchen)
    assert err.value.kind == "timeout" and "1 s" in err.value.reason
    assert time.monotonic() - started < 10.0
    assert worker is not None and planner.pid is None
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(worker, 0)


def test_a_worker_plans_as_the_backend_does_inline(kitchen, renderer):
    """galley's own planner in a worker gives the plan it gives in this process, from the same image."""
    instruction, image = "Move the bowl to the green zone.", renderer.render(7)
    inline = make_planner("galley", worker="inline").plan(instruction, image, kitchen)
    worker = make_planner("galley", worker="process")
    try:
        assert isinstance(worker, PlannerProcess) and worker.accepts_image
        planned = worker.plan(instruction, image, kitchen)
    finally:
        worker.close()
    assert planned.steps == inline.steps and set(planned.steps) <= set(valid_steps(kitchen))


def test_native_backends_run_in_a_worker_unless_told_otherwise(tmp_path):
    with pytest.raises(PlanningError) as err:  # the worker starts, the backend refuses the missing model
        make_planner("llama_cpp", options={"model_path": str(tmp_path / "none.gguf")})
    assert err.value.kind == "unavailable" and "none.gguf" in err.value.reason
    with pytest.raises(ValueError, match="worker mode"):
        make_planner("galley", worker="thread")


def test_a_crash_in_one_test_fails_that_test_and_the_run_goes_on(misbehaving_backends, tmp_path):
    """What scripts/test.sh sees when a native backend crashes: one failed test, not a dead pytest."""
    (tmp_path / "test_crash.py").write_text(
        textwrap.dedent(
            """
            from galley_core.scene import load_scene
            from galley_learning.planners.worker import PlannerProcess
            import misbehaving_backends

            def test_crashing_backend():
                planner = PlannerProcess(misbehaving_backends.Segfaulting, backend="llama_cpp")
                planner.plan("Move the bowl to the green zone.", None, None)

            def test_after_it():
                assert True
            """
        )
    )
    folder = Path(misbehaving_backends.__file__).parent
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_crash.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])},
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stdout + run.stderr  # tests failed; pytest itself did not crash
    assert "1 failed, 1 passed" in run.stdout
    assert "SIGSEGV" in run.stdout and "llama-cpp-python" in run.stdout


def test_galley_replans_what_remains_from_the_context_inline_and_in_a_worker(kitchen, renderer):
    """The replan context reaches the backend through the worker; galley plans what remains."""
    goal = ("move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl")
    where = {name: "purple" for name in kitchen.object_names} | {"bowl": "yellow"}
    context = PlanContext(
        "Move the bowl to the green zone.", tuple(where.items()), robot_zone="green", plan=goal, failure="x"
    )
    remaining = ("move to the yellow zone", "pick the bowl", "move to the green zone", "place the bowl")
    image = renderer.render(7)
    assert make_planner("galley", worker="inline").plan(
        context.instruction, image, kitchen, context
    ).steps == (remaining)
    worker = make_planner("galley", worker="process")
    try:
        assert worker.plan(context.instruction, image, kitchen, context).steps == remaining
        assert worker.plan(context.instruction, image, kitchen).steps != remaining  # no context: a first plan
    finally:
        worker.close()
    done = PlanContext(context.instruction, tuple((where | {"bowl": "green"}).items()), plan=goal)
    assert make_planner("galley", worker="inline").plan(done.instruction, image, kitchen, done).steps == ()
