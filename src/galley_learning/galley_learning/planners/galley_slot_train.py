"""Training galley's planner v3 (:mod:`.galley_slots`) across kitchens: the shipped one and generated ones.

Samples come from the shipped kitchen, as for v2 (:mod:`.galley_train`: the suite's seen templates,
minus the suite's held-out instructions, and the paraphrase grammar's training wordings), and from
the generated training kitchens (:data:`galley_core.scenes.splits.SPLITS` ``train``, seeds 0..99;
never the unseen ones): a few rendered episodes each, with requests from the same templates (the
suite's held-out templates excepted) and the same paraphrase grammar. Every text is read as the
planner reads it (:func:`~galley_learning.planners.galley_train.read_as_planner`) and delexicalised
once with the scene's names in scene order; each batch then draws fresh random slots for every
sample (words, steps, glimpses, object descriptions and presence targets move together), so that
no slot means a name. Word dropout hides a share of non-slot words. Same seed, same weights.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from galley_core.episode import sample_episode
from galley_core.scene import Scene
from galley_core.scenes.splits import split_seeds
from galley_core.tasks.suite import SuiteEntry, generate_suite
from galley_learning.planners.galley_model import (
    END,
    V3_WEIGHTS,
    GalleyModelConfig,
    greedy_decode,
    image_inputs,
    to_tensors,
)
from galley_learning.planners.galley_slots import (
    SLOTS,
    NameSlots,
    SlotPlannerNet,
    SlotVocabulary,
    save_slot_model,
)
from galley_learning.planners.galley_train import (
    EPISODE_SEED_BASE,
    paraphrase_entries,
    read_as_planner,
    warmup_cosine,
)
from galley_learning.planners.images import TopDownRenderer
from galley_learning.planners.train_config import PlannerTrainConfig

__all__ = ["SlotData", "scene_samples", "train_slot_planner"]

Progress = Callable[[str], None]
_STEPS = 3 * SLOTS + 1  # slot steps and <end>
_NAMES = 2 + 2 * SLOTS  # <pad>, <unk> and the slot words come first


@dataclass
class SlotData:
    """Samples with names in scene order (slot i = the scene's i-th name); per episode its image inputs."""

    tokens: list[list[str]]
    episode: list[int]
    steps: list[list[int]]  # slot-step ids in scene order, <end> last
    glimpses: list[np.ndarray[Any, Any]]  # per episode (SLOTS, G, G, 3) uint8, zones in scene order
    views: list[np.ndarray[Any, Any]]
    presence: list[np.ndarray[Any, Any]]  # per episode (SLOTS, SLOTS) zone x object
    objects: list[np.ndarray[Any, Any]]  # per episode (SLOTS, FEATURES)
    zones: list[int]  # per episode: how many zones its scene has
    names: list[int]  # per episode: how many objects

    def extend(self, other: SlotData) -> None:
        offset = len(self.glimpses)
        self.tokens += other.tokens
        self.episode += [e + offset for e in other.episode]
        self.steps += other.steps
        for name in ("glimpses", "views", "presence", "objects", "zones", "names"):
            getattr(self, name).extend(getattr(other, name))


def _template_entries(
    scene: Scene, count: int, episodes: int, seed: int, held_out: set[str]
) -> list[SuiteEntry]:
    """``count`` suite-template requests on the scene's training episodes.

    The suite's held-out templates (split ``unseen``) and ``held_out`` texts are never drawn.
    """
    per_template = max(1, math.ceil(count * 1.3 / 48))
    generated = generate_suite(
        scene,
        per_template=per_template,
        test_fraction=0.0,
        seed=seed,
        episode_sampler=lambda s, n: sample_episode(s, EPISODE_SEED_BASE + n % episodes),
    )
    pool = [e for e in generated if e.split != "unseen" and e.instruction.lower() not in held_out]
    chosen = random.Random(seed).sample(pool, min(count, len(pool)))
    return [replace(e, seed=EPISODE_SEED_BASE + e.seed % episodes) for e in chosen]


def scene_samples(  # noqa: PLR0917 -- one scene's share of the data, every knob explicit
    scene: Scene,
    templates: int,
    paraphrases: int,
    episodes: int,
    seed: int,
    model: GalleyModelConfig,
    held_out: set[str] | None = None,
) -> SlotData:
    """One scene's samples: ``templates`` + ``paraphrases`` requests on ``episodes`` rendered episodes."""
    entries = _template_entries(scene, templates, episodes, seed, held_out or set())
    entries += paraphrase_entries(scene, paraphrases, episodes, seed + 1)
    slots = NameSlots.of(scene)
    features, _ = slots.features(scene)
    renderer = TopDownRenderer(scene, model.image_width_px, model.image_height_px)
    distinct = sorted({e.seed for e in entries})
    data = SlotData([], [], [], [], [], [], [], [], [])
    index = {}
    for n, s in enumerate(distinct):
        glimpses, view = image_inputs(scene, renderer.render(s), model)
        padded = np.zeros((SLOTS, *glimpses.shape[1:]), dtype=np.uint8)
        padded[: len(glimpses)] = glimpses
        presence = np.zeros((SLOTS, SLOTS), dtype=np.float32)
        for p in sample_episode(scene, s).objects:
            presence[scene.zone_names.index(p.zone), scene.object_names.index(p.name)] = 1.0
        data.glimpses.append(padded)
        data.views.append(view)
        data.presence.append(presence)
        data.objects.append(features)
        data.zones.append(len(scene.zones))
        data.names.append(len(scene.objects))
        index[s] = n
    steps = {s: i for i, s in enumerate(SlotVocabulary.build([]).steps)}
    for e in entries:
        data.tokens.append(slots.tokens(read_as_planner(e, scene)))
        data.episode.append(index[e.seed])
        data.steps.append([steps[slots.to_slots(step)] for step in e.plan] + [steps[END]])
    return data


def _permuted(
    data: SlotData,
    rows: Sequence[int],
    vocab: SlotVocabulary,
    rng: np.random.Generator | None,
    max_words: int,
) -> Batch:
    """A batch with every sample's names moved to random slots (``rng``) or kept in scene order (None)."""
    b = len(rows)
    episodes = [data.episode[r] for r in rows]
    perm_o = np.stack([rng.permutation(SLOTS) if rng else np.arange(SLOTS) for _ in rows])
    perm_z = np.stack([rng.permutation(SLOTS) if rng else np.arange(SLOTS) for _ in rows])
    word_map = np.tile(np.arange(_NAMES), (b, 1))
    word_map[:, 2 : 2 + SLOTS] = 2 + perm_o
    word_map[:, 2 + SLOTS :] = 2 + SLOTS + perm_z
    ids = [vocab.encode(data.tokens[r], max_words) or [1] for r in rows]
    words = torch.zeros(b, max(len(i) for i in ids), dtype=torch.long)
    for i, seq in enumerate(ids):
        mapped = [int(word_map[i, w]) if w < _NAMES else w for w in seq]
        words[i, : len(seq)] = torch.tensor(mapped)
    step_map = np.tile(np.arange(_STEPS), (b, 1))
    step_map[:, :SLOTS] = perm_z
    step_map[:, SLOTS : 2 * SLOTS] = SLOTS + perm_o
    step_map[:, 2 * SLOTS : 3 * SLOTS] = 2 * SLOTS + perm_o
    steps = torch.full((b, max(len(data.steps[r]) for r in rows)), -100, dtype=torch.long)
    for i, r in enumerate(rows):
        steps[i, : len(data.steps[r])] = torch.tensor([int(step_map[i, s]) for s in data.steps[r]])
    inv_o, inv_z = np.argsort(perm_o, axis=1), np.argsort(perm_z, axis=1)
    at = np.arange(b)[:, None]
    distinct = sorted(set(episodes))
    where = np.array([distinct.index(e) for e in episodes])
    in_scene = np.arange(SLOTS)[None] < np.array([data.zones[e] for e in distinct])[:, None]
    glimpses, views = to_tensors(
        np.stack([data.glimpses[e] for e in distinct]), np.stack([data.views[e] for e in distinct])
    )
    objects = np.stack([data.objects[e] for e in episodes])[at, inv_o]
    presence = np.stack([data.presence[e] for e in episodes])[at, inv_z]
    presence = np.take_along_axis(presence, np.repeat(inv_o[:, None, :], SLOTS, axis=1), axis=2)
    zone_mask = in_scene[where][at, inv_z]
    object_mask = (np.arange(SLOTS)[None] < np.array([data.names[e] for e in episodes])[:, None])[at, inv_o]
    return Batch(
        words, glimpses, views, torch.from_numpy(in_scene), torch.from_numpy(where),
        torch.from_numpy(inv_z), torch.from_numpy(np.ascontiguousarray(objects)),
        torch.from_numpy(zone_mask), steps, torch.from_numpy(np.ascontiguousarray(presence)),
        torch.from_numpy(object_mask),
    )  # fmt: skip


@dataclass
class Batch:
    """A batch: per sample its words, steps and slots; the images once per distinct episode."""

    words: torch.Tensor  # (B, W)
    glimpses: torch.Tensor  # (E, SLOTS, 3, G, G), zones in scene order
    views: torch.Tensor  # (E, 3, h, w)
    in_scene: torch.Tensor  # (E, SLOTS) the glimpses that show a zone
    episode: torch.Tensor  # (B,) index into the episodes
    inv_z: torch.Tensor  # (B, SLOTS) the scene zone in each slot
    objects: torch.Tensor  # (B, SLOTS, FEATURES)
    zone_mask: torch.Tensor  # (B, SLOTS)
    steps: torch.Tensor  # (B, S) slot-step ids, -100 padding
    presence: torch.Tensor  # (B, SLOTS, SLOTS)
    object_mask: torch.Tensor  # (B, SLOTS)

    def encode(self, net: SlotPlannerNet) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`SlotPlannerNet.encode` of the batch, each image seen once."""
        seen, view_tokens = net.see(self.glimpses, self.views, self.in_scene)
        seen = seen[self.episode][torch.arange(len(self.words))[:, None], self.inv_z]
        return net.encode(self.words, seen, view_tokens[self.episode], self.objects, self.zone_mask)


def _episode_order(data: SlotData, rng: random.Random) -> list[int]:
    """Samples in random order, those of one episode together: a batch sees each image once (8x cheaper)."""
    by_episode: dict[int, list[int]] = {}
    for i, e in enumerate(data.episode):
        by_episode.setdefault(e, []).append(i)
    groups = list(by_episode.values())
    rng.shuffle(groups)
    for g in groups:
        rng.shuffle(g)
    return [i for g in groups for i in g]


def _allowed(zone_mask: torch.Tensor, object_mask: torch.Tensor) -> torch.Tensor:
    """(B, steps) the slot steps whose slot holds a name (and <end>)."""
    return torch.cat(
        [zone_mask, object_mask, object_mask, torch.ones(len(zone_mask), 1, dtype=torch.bool)], 1
    )


def evaluate_slot_data(
    net: SlotPlannerNet, data: SlotData, vocab: SlotVocabulary, batch_size: int = 128
) -> float:
    """Whole-plan accuracy of greedy decoding on ``data`` (names in scene order, the scene's slots only)."""
    net.eval()
    right = 0
    with torch.no_grad():
        for start in range(0, len(data.tokens), batch_size):
            rows = list(range(start, min(start + batch_size, len(data.tokens))))
            batch = _permuted(data, rows, vocab, None, net.config.max_words)
            memory, pad, _ = batch.encode(net)
            allowed = _allowed(batch.zone_mask, batch.object_mask)
            for i, plan in enumerate(_decode_rows(net, memory, pad, allowed)):
                right += plan == [int(s) for s in batch.steps[i] if s >= 0][:-1]
    return right / max(1, len(data.tokens))


def _decode_rows(
    net: SlotPlannerNet, memory: torch.Tensor, pad: torch.Tensor, allowed: torch.Tensor
) -> list[list[int]]:
    """Greedy decoding with one mask per row (rows of one scene share it: decode them together)."""
    out: list[list[int]] = [[] for _ in range(len(memory))]
    groups: dict[tuple[bool, ...], list[int]] = {}
    for i, row in enumerate(allowed.tolist()):
        groups.setdefault(tuple(row), []).append(i)
    for mask, rows in groups.items():
        for i, plan in zip(
            rows, greedy_decode(net, memory[rows], pad[rows], torch.tensor(mask)), strict=True
        ):  # type: ignore[arg-type]
            out[i] = plan
    return out


def train_slot_planner(  # noqa: PLR0915 -- one training loop, read top to bottom
    scene: Scene,
    suite: Sequence[SuiteEntry],
    *,
    config: PlannerTrainConfig | None = None,
    model: GalleyModelConfig | None = None,
    out: Any = V3_WEIGHTS,
    progress: Progress = print,
) -> dict[str, Any]:
    """Generate data in ``scene`` and the training kitchens, train, save to ``out``; returns the record."""
    from galley_sim.scene_gen import generate  # noqa: PLC0415 (deferred: mujoco)

    config = config or PlannerTrainConfig()
    model = model or GalleyModelConfig()
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    started = time.monotonic()
    held_out = {e.instruction.lower() for e in suite if e.split != "train"}
    progress(f"{scene.name}: {config.instructions} template and {config.paraphrases} paraphrase requests")
    data = scene_samples(
        scene, config.instructions, config.paraphrases, config.episodes, config.seed + 1, model, held_out
    )
    kitchens = split_seeds("train")[: config.kitchens]
    for n, seed in enumerate(kitchens, 1):
        generated = generate(seed).scene
        half = config.kitchen_samples // 2
        data.extend(
            scene_samples(
                generated,
                half,
                config.kitchen_samples - half,
                config.kitchen_episodes,
                config.seed + 10 * seed + 3,
                model,
            )
        )
        if n % 10 == 0 or n == len(kitchens):
            progress(
                f"{n}/{len(kitchens)} training kitchens: {len(data.tokens)} samples, "
                f"{len(data.views)} episodes ({time.monotonic() - started:.0f} s)"
            )
    validation = [e for e in suite if e.split == "train"][: config.validation or None]
    vocab = SlotVocabulary.build(data.tokens)
    val = _suite_samples(scene, validation, model)
    net = SlotPlannerNet(model, vocab)
    optimiser = torch.optim.AdamW(net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    batches = math.ceil(len(data.tokens) / config.batch_size)
    scheduler = warmup_cosine(optimiser, config.epochs, batches)
    step_loss = nn.CrossEntropyLoss(ignore_index=-100)
    order_rng = random.Random(config.seed)
    slot_rng = np.random.default_rng(config.seed)
    dropout_rng = torch.Generator().manual_seed(config.seed)
    history = []
    val_acc = 0.0
    for epoch in range(1, config.epochs + 1):
        net.train()
        order = _episode_order(data, order_rng)
        losses = []
        for b in range(batches):
            rows = order[b * config.batch_size : (b + 1) * config.batch_size]
            batch = _permuted(data, rows, vocab, slot_rng, model.max_words)
            if config.word_dropout > 0:  # unknown words must not throw the model: hide some known ones
                hide = torch.rand(batch.words.shape, generator=dropout_rng) < config.word_dropout
                batch.words = torch.where(
                    hide & (batch.words >= _NAMES), torch.ones_like(batch.words), batch.words
                )
            memory, pad, logits = batch.encode(net)
            steps = batch.steps
            prefix = torch.cat([torch.full((len(rows), 1), net.start), steps[:, :-1].clamp(min=0)], dim=1)
            loss = step_loss(net.decode(memory, pad, prefix).flatten(0, 1), steps.flatten())
            valid = batch.zone_mask[:, :, None] & batch.object_mask[:, None, :]
            seen = nn.functional.binary_cross_entropy_with_logits(logits[valid], batch.presence[valid])
            loss = loss + config.presence_weight * seen
            optimiser.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optimiser.step()
            scheduler.step()
            losses.append(float(loss.detach()))
        val_acc = evaluate_slot_data(net, val, vocab)
        history.append({"epoch": epoch, "loss": float(np.mean(losses)), "val_whole_plan": val_acc})
        progress(
            f"epoch {epoch}/{config.epochs}: loss {np.mean(losses):.4f}, whole plans right on the suite's "
            f"train split {val_acc:.3f} ({time.monotonic() - started:.0f} s)"
        )
        record = {
            "config": asdict(config),
            "scene": scene.name,
            "training_kitchens": f"generated train split, seeds {kitchens[0]}..{kitchens[-1]}"
            if kitchens
            else "",
            "samples": len(data.tokens),
            "episodes": len(data.views),
            "val_em_suite_train": val_acc,
            "history": history,
            "seconds": round(time.monotonic() - started, 1),
            "torch": torch.__version__,
        }
        save_slot_model(out, net, vocab, record)  # after every epoch: a long run stopped early keeps one
    progress(f"saved {out}")
    return record


def _suite_samples(scene: Scene, entries: Sequence[SuiteEntry], model: GalleyModelConfig) -> SlotData:
    """``entries`` of the scene's suite (their own episodes) as samples, for validation."""
    slots = NameSlots.of(scene)
    features, _ = slots.features(scene)
    renderer = TopDownRenderer(scene, model.image_width_px, model.image_height_px)
    steps = {s: i for i, s in enumerate(SlotVocabulary.build([]).steps)}
    data = SlotData([], [], [], [], [], [], [], [], [])
    for n, e in enumerate(entries):
        glimpses, view = image_inputs(scene, renderer.render(e.seed), model)
        padded = np.zeros((SLOTS, *glimpses.shape[1:]), dtype=np.uint8)
        padded[: len(glimpses)] = glimpses
        data.glimpses.append(padded)
        data.views.append(view)
        data.presence.append(np.zeros((SLOTS, SLOTS), dtype=np.float32))
        data.objects.append(features)
        data.zones.append(len(scene.zones))
        data.names.append(len(scene.objects))
        data.tokens.append(slots.tokens(read_as_planner(e, scene)))
        data.episode.append(n)
        data.steps.append([steps[slots.to_slots(step)] for step in e.plan] + [steps[END]])
    return data
