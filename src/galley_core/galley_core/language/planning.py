"""Task planning from an instruction and a top-down image: the interface every planner backend shares.

A :class:`Planner` answers ``plan(instruction, top_down_image, scene) -> Plan``. Kitchen-R's VLM
baseline (Sec. VI-A, Table II) reads a prompt made of

* a system text saying what a plan is;
* the scene's valid steps (Kitchen-R's "valid instructions", :func:`valid_steps`);
* in-context examples of correct plans from the instruction suite, each with a textual description
  of its scene (the paper's examples carry OmniFusion's descriptions instead of images);
* the instruction, and the top-down image where the backend accepts one;

and generates under input-dependent constraints (Geng et al., EMNLP 2023): from the scene, the set
of valid steps becomes a JSON Schema ``{"plan": [enum of valid steps]}`` with 1..N items
(:func:`plan_json_schema`), a GBNF grammar (:func:`plan_gbnf`) and a regular expression
(:func:`plan_regex`). :func:`build_prompt` switches every part off on request, so the Table II
ablation (vanilla, + valid steps, + in-context examples, + constrained decoding) can be reproduced.

Whatever a backend returns goes through :func:`parse_answer`: JSON or one step per line, each step
parsed by the plan grammar and checked against the scene. Text is never evaluated as code. An
answer that fails is retried or reported (:class:`PlanningError`), never executed.
:class:`TextPlanner` implements that loop for backends that generate text; they implement
:meth:`TextPlanner.generate` only. This module is pure Python: no HTTP, no torch.
"""

from __future__ import annotations

import json
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from galley_core.config import Config, param
from galley_core.episode import sample_episode
from galley_core.language.refusal import refusal
from galley_core.scene import Scene
from galley_core.tasks.grammar import InvalidPlanError, parse_plan, valid_steps, validate_plan
from galley_core.tasks.replanning import PlanContext, scene_graph_text
from galley_core.tasks.suite import SuiteEntry

__all__ = [
    "FAILURE_KINDS",
    "Constraints",
    "Example",
    "Plan",
    "Planner",
    "PlanningError",
    "Prompt",
    "PromptConfig",
    "TextPlanner",
    "build_prompt",
    "check_instruction",
    "constraints_for",
    "parse_answer",
    "plan_gbnf",
    "plan_json_schema",
    "plan_regex",
    "scene_description",
    "select_examples",
]

#: Why planning failed, as the ``kind`` of :class:`PlanningError` (and the start of a status reason).
FAILURE_KINDS = (
    "empty_instruction",
    "out_of_scope",
    "unknown_name",
    "no_image",
    "off_grammar",
    "unavailable",
    "timeout",
    "model",
)

SYSTEM_TEXT = (
    "You are the task planner of a mobile manipulator in a kitchen. The kitchen has coloured zones "
    "where objects lie. Turn the user's instruction into a plan: a list of atomic steps, each exactly "
    "one of 'move to the <zone> zone', 'pick the <object>' or 'place the <object>'. The robot starts "
    "at no zone, holds one object at a time, moves to an object's zone before picking it and to the "
    "target zone before placing it. Look at the top-down image to see in which zone each object lies. "
    'Answer with JSON only: {"plan": ["<step>", ...]}.'
)


class PlanningError(Exception):
    """No plan: the reason names the input and the fix. ``kind`` is one of :data:`FAILURE_KINDS`."""

    def __init__(self, kind: str, reason: str) -> None:
        if kind not in FAILURE_KINDS:
            raise ValueError(f"unknown failure kind {kind!r}; kinds: {', '.join(FAILURE_KINDS)}")
        self.kind = kind
        self.reason = reason
        super().__init__(f"{kind}: {reason}")


@dataclass(frozen=True)
class Plan:
    """A validated plan: steps in the grammar's exact wording, and what produced it."""

    instruction: str
    steps: tuple[str, ...]
    backend: str = ""
    attempts: int = 1
    raw: str = ""


class Planner(ABC):
    """A task planner: ``plan(instruction, top_down_image, scene) -> Plan``."""

    #: Short backend name (``openai``, ``llama_cpp``, ``transformers``, ``galley``).
    name: str = "planner"
    #: Whether the backend reads the top-down image.
    accepts_image: bool = False

    @abstractmethod
    def plan(
        self, instruction: str, top_down_image: Any, scene: Scene, context: PlanContext | None = None
    ) -> Plan:
        """Plan ``instruction`` in ``scene`` seen from above.

        Args:
            instruction: natural-language instruction.
            top_down_image: (H, W, 3) uint8 RGB top-down image of the episode, or None.
            scene: the scene (zones and objects).
            context: when replanning after a failure, the state of the world and the steps done
                (:mod:`galley_core.tasks.replanning`); the plan then covers what remains.

        Raises:
            PlanningError: no valid plan; ``kind`` and ``reason`` say why.
        """


@dataclass(frozen=True)
class PromptConfig(Config):
    """Which parts a prompt has (Kitchen-R Table II) and how the answer is constrained."""

    system_text: bool = param(True, "include the system text describing plans and the answer format")
    valid_steps: bool = param(True, "list the scene's valid steps (Kitchen-R's valid instructions)")
    examples: int = param(8, "number of in-context examples of correct plans (0 = none)", ge=0, le=64)
    example_selection: str = param(
        "similar",
        "how examples are chosen from the suite's train split: most word overlap with the instruction, "
        "or random (seeded)",
        choices=("similar", "random"),
    )
    example_seed: int = param(0, "seed of the random example selection", ge=0)
    image: bool = param(True, "send the top-down image where the backend accepts one")
    constrained: bool = param(True, "constrain decoding to the scene's valid steps (schema / grammar)")
    max_steps: int = param(8, "most steps a plan may have (Kitchen-R's plans have 4 to 8)", ge=1, le=32)
    retries: int = param(2, "extra attempts after an answer off the grammar", ge=0, le=10)


@dataclass(frozen=True)
class Example:
    """An in-context example: the instruction, a textual description of its scene, the gold plan."""

    instruction: str
    description: str
    plan: tuple[str, ...]


@dataclass(frozen=True)
class Constraints:
    """Input-dependent decoding constraints of one scene: steps, JSON Schema, GBNF, regex."""

    steps: tuple[str, ...]
    json_schema: dict[str, Any]
    gbnf: str
    regex: str
    max_steps: int


@dataclass(frozen=True)
class Prompt:
    """A chat prompt: messages (role, text), whether to attach the image, and the constraints."""

    messages: tuple[tuple[str, str], ...]
    image: bool
    constraints: Constraints | None
    examples: tuple[Example, ...] = field(default=())


# -- constrained decoding ----------------------------------------------------------------------


def plan_json_schema(scene: Scene, max_steps: int = 8) -> dict[str, Any]:
    """JSON Schema of ``{"plan": [step, ...]}``: 1..``max_steps`` steps, each a valid step of ``scene``."""
    return {
        "type": "object",
        "properties": {
            "plan": {
                "type": "array",
                "items": {"type": "string", "enum": valid_steps(scene)},
                "minItems": 1,
                "maxItems": max_steps,
            }
        },
        "required": ["plan"],
        "additionalProperties": False,
    }


def plan_gbnf(scene: Scene, max_steps: int = 8) -> str:
    """A GBNF grammar (llama.cpp) for the same JSON as :func:`plan_json_schema`, compact spacing allowed."""
    alternatives = " | ".join(json.dumps(json.dumps(s)) for s in valid_steps(scene))
    optional = "".join(' ( "," ws step' for _ in range(max_steps - 1)) + " )?" * (max_steps - 1)
    return "\n".join(
        [
            f'root ::= "{{" ws "\\"plan\\"" ws ":" ws "[" ws step{optional} ws "]" ws "}}"',
            f"step ::= {alternatives}",
            "ws ::= [ \\t\\n]{0,4}",
        ]
    )


def plan_regex(scene: Scene, max_steps: int = 8) -> str:
    """A regular expression matching exactly the JSON answers of :func:`plan_gbnf`."""
    step = "(?:" + "|".join(re.escape(json.dumps(s)) for s in valid_steps(scene)) + ")"
    ws = r"[ \t\n]{0,4}"
    return (
        r"\{" + ws + r'"plan"' + ws + ":" + ws + r"\[" + ws + step
        + f"(?:{ws},{ws}{step}){{0,{max_steps - 1}}}" + ws + r"\]" + ws + r"\}"
    )  # fmt: skip


def constraints_for(scene: Scene, max_steps: int = 8) -> Constraints:
    """Every constraint artefact of ``scene`` at once."""
    return Constraints(
        steps=tuple(valid_steps(scene)),
        json_schema=plan_json_schema(scene, max_steps),
        gbnf=plan_gbnf(scene, max_steps),
        regex=plan_regex(scene, max_steps),
        max_steps=max_steps,
    )


# -- answers -----------------------------------------------------------------------------------

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_answer(text: str, scene: Scene, max_steps: int = 8) -> tuple[str, ...]:
    """The steps of a backend's answer, validated; never evaluates the text.

    Accepts ``{"plan": [...]}`` (possibly wrapped in prose or a code fence), or one step per line
    (numbering, bullets and trailing commas forgiven).

    Raises:
        InvalidPlanError: no steps, too many, a step off the grammar, or a name the scene lacks.
    """
    steps: list[str] | None = None
    match = _JSON_OBJECT.search(text)
    if match is not None:
        try:
            document = json.loads(match.group(0))
        except json.JSONDecodeError:
            document = None
        if isinstance(document, dict) and isinstance(document.get("plan"), list):
            steps = [str(s) for s in document["plan"]]
    if steps is None:
        lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line) for line in text.splitlines()]
        steps = [line.strip().strip(",.;\"'") for line in lines if line.strip().strip("`")]
    if not steps:
        raise InvalidPlanError(f"the answer has no steps: {text[:200]!r}")
    if len(steps) > max_steps:
        raise InvalidPlanError(f"the answer has {len(steps)} steps, more than max_steps = {max_steps}")
    plan = parse_plan(steps)
    validate_plan(plan, scene)
    return tuple(str(s) for s in plan)


# -- instructions ------------------------------------------------------------------------------


def check_instruction(instruction: str, scene: Scene) -> str:
    """The instruction, stripped; refused when the scene cannot ground it.

    Backends cannot know that a name is missing or that nothing was asked of them, so this runs
    before any backend is asked: :func:`galley_core.language.refusal.refusal` reads the words
    (typos corrected) and refuses negations and requests for nothing, questions, actions other than
    moving objects between zones, requests that name no object or no place to put it
    (``out_of_scope``), and objects or zones the scene lacks (``unknown_name``).

    Raises:
        PlanningError: ``empty_instruction``, ``out_of_scope`` or ``unknown_name``; the reason names
            the instruction and what galley can do (the valid names).
    """
    text = " ".join(instruction.split())
    if not text:
        raise PlanningError(
            "empty_instruction",
            "the instruction is empty; say what to do, e.g. 'Move the bowl to the green zone.'",
        )
    refused = refusal(text, scene)
    if refused is not None:
        raise PlanningError(*refused)
    return text


# -- prompts -----------------------------------------------------------------------------------


def scene_description(scene: Scene, seed: int) -> str:
    """Where each object starts in the episode ``seed``: the text that stands in for an example's image."""
    episode = sample_episode(scene, seed)
    return "; ".join(f"the {p.name} is in the {p.zone} zone" for p in episode.objects) + "."


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def select_examples(
    instruction: str, entries: Sequence[SuiteEntry], scene: Scene, config: PromptConfig
) -> tuple[Example, ...]:
    """``config.examples`` examples from the ``train`` entries: most similar first, or seeded random.

    Similarity is the Jaccard overlap of words; ties keep suite order. At most one example per
    template is taken while there are enough templates, so that the examples show varied wordings.
    """
    pool = [e for e in entries if e.split == "train"]
    if config.examples == 0 or not pool:
        return ()
    if config.example_selection == "random":
        chosen = random.Random(config.example_seed).sample(pool, min(config.examples, len(pool)))
    else:
        query = _words(instruction)
        scored = sorted(
            pool,
            key=lambda e: -len(query & _words(e.instruction)) / max(1, len(query | _words(e.instruction))),
        )
        chosen, templates = [], set()
        for entry in scored:
            if entry.template not in templates:
                chosen.append(entry)
                templates.add(entry.template)
            if len(chosen) == config.examples:
                break
    return tuple(Example(e.instruction, scene_description(scene, e.seed), e.plan) for e in chosen)


def build_prompt(
    instruction: str,
    scene: Scene,
    config: PromptConfig,
    *,
    examples: Sequence[Example] = (),
    accepts_image: bool = False,
    context: PlanContext | None = None,
) -> Prompt:
    """The chat prompt for ``instruction``; every part can be switched off by ``config``.

    Messages are (role, text) pairs with roles ``system``, ``user`` and ``assistant``; examples
    are user/assistant turns before the instruction. The caller attaches the image to the last
    user message when ``Prompt.image`` is true. A replan's ``context`` goes in as MORE's scene graph
    in text (:func:`~galley_core.tasks.replanning.scene_graph_text`) before the instruction.
    """
    messages: list[tuple[str, str]] = []
    if config.system_text:
        messages.append(("system", SYSTEM_TEXT))
    shown = tuple(examples[: config.examples])
    for example in shown:
        messages.append(("user", f"Scene: {example.description}\nInstruction: {example.instruction}"))
        messages.append(("assistant", json.dumps({"plan": list(example.plan)})))
    parts = []
    if config.valid_steps:
        parts.append("Valid steps (use only these, word for word):\n" + "\n".join(valid_steps(scene)))
    image = config.image and accepts_image
    if image:
        parts.append("Scene: see the top-down image.")
    if context is not None:
        parts.append(scene_graph_text(context, scene))
    parts.append(f"Instruction: {instruction}")
    messages.append(("user", "\n\n".join(parts)))
    constraints = constraints_for(scene, config.max_steps) if config.constrained else None
    return Prompt(tuple(messages), image, constraints, shown)


# -- a planner over a text generator -----------------------------------------------------------


class TextPlanner(Planner):
    """A planner whose backend generates text from a :class:`Prompt`; validation and retries here.

    Args:
        prompt: which prompt parts to use and how to constrain decoding.
        suite: entries to draw in-context examples from (their ``train`` split).
    """

    def __init__(self, *, prompt: PromptConfig | None = None, suite: Sequence[SuiteEntry] = ()) -> None:
        self.prompt_config = prompt or PromptConfig()
        self.suite = tuple(suite)

    @abstractmethod
    def generate(self, prompt: Prompt, top_down_image: Any, attempt: int) -> str:
        """The backend's raw answer to ``prompt`` (attempt 0, 1, ...).

        Raises:
            PlanningError: ``unavailable`` or ``timeout`` when the backend cannot answer.
        """

    def plan(
        self, instruction: str, top_down_image: Any, scene: Scene, context: PlanContext | None = None
    ) -> Plan:
        """See :meth:`Planner.plan`; an answer off the grammar is retried ``retries`` times."""
        text = check_instruction(instruction, scene)
        config = self.prompt_config
        examples = select_examples(text, self.suite, scene, config)
        prompt = build_prompt(
            text, scene, config, examples=examples, accepts_image=self.accepts_image, context=context
        )
        errors = []
        for attempt in range(config.retries + 1):
            raw = self.generate(prompt, top_down_image if prompt.image else None, attempt)
            try:
                steps = parse_answer(raw, scene, config.max_steps)
            except InvalidPlanError as err:
                errors.append(str(err))
                continue
            return Plan(text, steps, self.name, attempt + 1, raw)
        raise PlanningError(
            "off_grammar",
            f"{self.name} answered off the plan grammar {len(errors)} times (last: {errors[-1]}); "
            "nothing is executed; enable constrained decoding or in-context examples",
        )
