"""task_planner in the embedded host with the real simulator: instruction + latched top-down image
-> plan on /task/plan; bad input and a missing server give a FAILED status with the reason and no plan."""

from __future__ import annotations

import socket
from typing import Any

from galley_core.episode import sample_episode
from galley_core.scene import load_scene
from galley_core.tasks.replanning import PlanContext
from galley_core.tasks.suite import plan_for_instruction
from galley_nodes.registry import load_node_class
from galley_runtime import messages
from galley_runtime.embedded import EmbeddedHost
from galley_runtime.qos import QoS

FAILED, SUCCEEDED = 3, 2


def planner_host(repo, seed: int, **params: Any) -> tuple[EmbeddedHost, dict[str, list[Any]], Any]:
    host = EmbeddedHost([repo / "config" / "galley.yaml"])
    host.add_node(load_node_class("sim"), parameters={"seed": seed, "cameras_enabled": False})
    host.add_node(load_node_class("task_planner"), parameters=params)
    seen: dict[str, list[Any]] = {"plan": [], "status": []}
    probe = host.participant("probe")
    probe.create_subscription("/task/plan", "galley_msgs/msg/TaskPlan", seen["plan"].append, QoS.latched())
    probe.create_subscription(
        "/task_planner/status", "galley_msgs/msg/ActionStatus", seen["status"].append, QoS.latched()
    )
    say = probe.create_publisher("/task/instruction", "std_msgs/msg/String", QoS(depth=10))
    return host, seen, lambda text: say.publish(messages.new("std_msgs/msg/String", data=text))


def test_the_plan_matches_the_episode_the_simulator_shows(repo):
    kitchen = load_scene(repo / "config" / "scenes" / "kitchen.yaml")
    host, seen, say = planner_host(repo, seed=21)
    episode = sample_episode(kitchen, 21)
    bowl, fork = episode.placement("bowl").zone, episode.placement("fork").zone
    instruction = f"Replace the bowl in the {bowl} zone with the fork from the {fork} zone."
    say(instruction)
    assert host.run_until(lambda: bool(seen["plan"]), 2.0)
    _, gold = plan_for_instruction(instruction, kitchen, episode)
    assert list(seen["plan"][-1].steps) == [str(s) for s in gold]
    assert seen["plan"][-1].instruction == instruction
    assert seen["status"][-1].state == SUCCEEDED and seen["status"][-1].phase == "galley"


def test_empty_unknown_and_out_of_scope_instructions_fail_with_a_reason_and_publish_no_plan(repo):
    host, seen, say = planner_host(repo, seed=3)
    for text, reason in (
        ("  ", "empty_instruction"),
        ("Move the spoon to the red zone.", "unknown_name"),
        ("Put the cup in the orange zone.", "unknown_name"),
        ("How are you?", "out_of_scope: 'How are you?' is a question"),
        ("Leave everything as it is.", "out_of_scope"),
        ("Bring me a coffee.", "out_of_scope"),
    ):
        say(text)
        host.run_for(0.2)
        assert seen["status"][-1].state == FAILED and seen["status"][-1].reason.startswith(reason)
    assert seen["plan"] == []


def test_a_server_that_is_down_fails_the_instruction_with_no_plan(repo):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    host, seen, say = planner_host(
        repo, seed=3, backend="openai", base_url=f"http://127.0.0.1:{port}/v1", model="m",
        http_retries=0, vision=False, examples=0,
    )  # fmt: skip
    say("Move the cup to the red zone.")
    host.run_for(0.2)
    status = seen["status"][-1]
    assert status.state == FAILED and status.reason.startswith("unavailable") and f":{port}" in status.reason
    assert seen["plan"] == []


def test_a_transformers_backend_without_its_model_fails_the_instruction_with_no_plan(repo, tmp_path):
    missing = str(tmp_path / "no_model")
    host, seen, say = planner_host(repo, seed=3, backend="transformers", model_path=missing, device="cpu")
    say("Move the cup to the red zone.")
    host.run_for(0.2)
    status = seen["status"][-1]
    assert status.state == FAILED and status.phase == "transformers"
    assert status.reason.startswith("backend 'transformers' could not start: unavailable")
    assert missing in status.reason or "pip install" in status.reason  # no model, or no library
    assert seen["plan"] == []


def test_a_replan_whose_fresh_image_never_comes_plans_on_the_last_image(repo):
    """Under Isaac Sim nothing answers /sim/render_top_down: the planner waits no longer than its timeout."""
    host = EmbeddedHost([repo / "config" / "galley.yaml"])
    host.add_node(load_node_class("task_planner"), parameters={"fresh_image_timeout_s": 1.0})
    probe = host.participant("probe")
    plans: list[Any] = []
    asked: list[Any] = []
    probe.create_subscription("/task/plan", "galley_msgs/msg/TaskPlan", plans.append, QoS.latched())
    probe.create_subscription("/sim/render_top_down", "std_msgs/msg/Empty", asked.append, QoS(depth=10))
    image = probe.create_publisher("/camera/top_down/image_raw", "sensor_msgs/msg/Image", QoS.latched())
    image.publish(
        messages.new("sensor_msgs/msg/Image", height=4, width=4, encoding="rgb8", step=12, data=[90] * 48)
    )
    replan = probe.create_publisher("/task/replan", "std_msgs/msg/String", QoS(depth=10))
    context = PlanContext(
        instruction="Move the bowl to the green zone.",
        objects=(
            ("apple", "red"),
            ("bowl", "blue"),
            ("cup", "yellow"),
            ("fork", "purple"),
            ("plate", "none"),
        ),
        plan=("move to the blue zone", "pick the bowl", "move to the green zone", "place the bowl"),
        failure="pick the bowl: the grasp missed",
    )
    host.run_for(0.1)
    replan.publish(messages.new("std_msgs/msg/String", data=context.to_json()))
    host.run_for(0.6)
    assert len(asked) == 1 and plans == []  # asked for a fresh image, still waiting for it
    assert host.run_until(lambda: bool(plans), 1.5)
    assert host.now_s < 0.1 + 1.0 + 0.5  # within the timeout and one check period
    assert list(plans[-1].steps)[-2:] == ["move to the green zone", "place the bowl"]
