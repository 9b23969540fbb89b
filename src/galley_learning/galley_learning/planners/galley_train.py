"""Training galley's planner: generated episodes (rendered top-down image + instruction -> gold plan).

Training data is generated fresh, never taken from the suite's evaluation entries: instructions
come from the suite's templates (:func:`galley_core.tasks.suite.generate_suite` with another seed)
of the seen templates only (the suite's ``unseen`` templates are never trained on), instructions
that appear verbatim in the suite's ``test`` split are dropped, and episodes come from a pool of
seeds far from the suite's. As many again come from galley's own paraphrase grammar
(:mod:`galley_learning.planners.phrasing`, its training wordings only): terse, reordered, chained,
polite, misspelt requests. Every text is read as the planner reads it
(:func:`galley_core.language.reading.canonical`, location references resolved from the episode), and
while training a share of its non-name words is replaced by ``<unk>`` so that words the model never
saw do not throw it. Each episode is rendered once by the simulator; several instructions share it.
The suite's ``train`` split is the validation set shown after every epoch.
Same seed, same data, same weights (on the same torch build).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from galley_core.episode import Episode, sample_episode
from galley_core.language.reading import canonical
from galley_core.scene import Scene
from galley_core.tasks.grammar import format_step
from galley_core.tasks.metrics import exact_match
from galley_core.tasks.suite import SuiteEntry, generate_suite, gold_plan
from galley_learning.planners.galley_model import (
    END,
    V2_WEIGHTS,
    GalleyModelConfig,
    PlannerNet,
    Vocabulary,
    greedy_decode,
    image_inputs,
    save_model,
    to_tensors,
)
from galley_learning.planners.images import TopDownRenderer
from galley_learning.planners.phrasing import TRAINING, phrase
from galley_learning.planners.train_config import PlannerTrainConfig

__all__ = ["EPISODE_SEED_BASE", "PlannerTrainConfig", "TrainingData", "make_training_data", "train_planner"]

#: Training episodes use seeds from here on; the suite draws its episode seeds below 1,000,000.
EPISODE_SEED_BASE = 10_000_000

Progress = Callable[[str], None]


@dataclass
class TrainingData:
    """Encoded samples: word ids, episode index, step ids; per episode: glimpses, view, presence."""

    words: list[list[int]]
    episode: list[int]
    steps: list[list[int]]
    glimpses: np.ndarray[Any, Any]  # (E, Z, G, G, 3) uint8
    views: np.ndarray[Any, Any]  # (E, h, w, 3) uint8
    presence: np.ndarray[Any, Any]  # (E, Z, O) float32, 1 where the object starts in the zone


def _presence(scene: Scene, episode: Episode) -> np.ndarray[Any, Any]:
    out = np.zeros((len(scene.zones), len(scene.objects)), dtype=np.float32)
    for p in episode.objects:
        out[scene.zone_names.index(p.zone), scene.object_names.index(p.name)] = 1.0
    return out


def read_as_planner(entry: SuiteEntry, scene: Scene) -> str:
    """The entry's instruction as the planner reads it, location references resolved from its episode."""
    where = {p.zone: p.name for p in sample_episode(scene, entry.seed).objects}
    return canonical(entry.instruction, scene, where)


def paraphrase_entries(scene: Scene, count: int, episodes: int, seed: int) -> list[SuiteEntry]:
    """``count`` requests of the paraphrase grammar's training wordings on the training episodes."""
    rng = random.Random(seed)
    entries = []
    for n in range(count):
        episode_seed = EPISODE_SEED_BASE + rng.randrange(episodes)
        start = {p.name: p.zone for p in sample_episode(scene, episode_seed).objects}
        text, relocations, kind = phrase(start, scene.zone_names, rng, TRAINING)
        plan = tuple(format_step(s) for s in gold_plan(relocations, start))
        entries.append(SuiteEntry(f"paraphrase-{n}", kind, "train", text, episode_seed, plan))
    return entries


def encode_entries(  # noqa: PLR0917 -- internal, called twice
    entries: Sequence[SuiteEntry],
    seeds: Sequence[int],
    scene: Scene,
    vocab: Vocabulary,
    model: GalleyModelConfig,
    renderer: TopDownRenderer,
    progress: Progress,
    what: str,
) -> TrainingData:
    """Render every distinct seed of ``seeds`` once and encode the entries (entry i refers to seeds[i])."""
    distinct = sorted(set(seeds))
    where = {s: i for i, s in enumerate(distinct)}
    glimpses, views, presence = [], [], []
    started = time.monotonic()
    for n, seed in enumerate(distinct, 1):
        g, v = image_inputs(scene, renderer.render(seed), model)
        glimpses.append(g)
        views.append(v)
        presence.append(_presence(scene, sample_episode(scene, seed)))
        if n % 250 == 0 or n == len(distinct):
            progress(f"rendered {n}/{len(distinct)} {what} episodes ({time.monotonic() - started:.0f} s)")
    step_index = {s: i for i, s in enumerate(vocab.steps)}
    return TrainingData(
        words=[vocab.encode(read_as_planner(e, scene), model.max_words) or [1] for e in entries],
        episode=[where[s] for s in seeds],
        steps=[[step_index[s] for s in e.plan] + [step_index[END]] for e in entries],
        glimpses=np.stack(glimpses),
        views=np.stack(views),
        presence=np.stack(presence),
    )


def make_training_data(
    scene: Scene,
    suite: Sequence[SuiteEntry],
    config: PlannerTrainConfig,
    model: GalleyModelConfig,
    progress: Progress,
) -> tuple[Vocabulary, TrainingData, list[SuiteEntry]]:
    """The vocabulary, the encoded training data and its entries (see the module docstring)."""
    unseen = {e.template for e in suite if e.split == "unseen"}
    held_out = {e.instruction.lower() for e in suite if e.split != "train"}
    seen_templates = len({e.template for e in suite} - unseen)

    @cache
    def episode_of(seed: int) -> Episode:
        return sample_episode(scene, EPISODE_SEED_BASE + seed % config.episodes)

    per_template = math.ceil(config.instructions * 1.3 / max(1, seen_templates))
    progress(f"generating instructions from {seen_templates} seen templates ({per_template} each)")
    generated = generate_suite(
        scene,
        per_template=per_template,
        test_fraction=0.0,
        seed=config.seed + 1,
        episode_sampler=lambda _scene, seed: episode_of(seed),
    )
    pool = [e for e in generated if e.template not in unseen and e.instruction.lower() not in held_out]
    entries = random.Random(config.seed).sample(pool, min(config.instructions, len(pool)))
    entries = [replace(e, seed=EPISODE_SEED_BASE + e.seed % config.episodes) for e in entries]
    progress(f"drawing {config.paraphrases} requests from the paraphrase grammar")
    entries += paraphrase_entries(scene, config.paraphrases, config.episodes, config.seed + 2)
    seeds = [e.seed for e in entries]
    vocab = Vocabulary.build([read_as_planner(e, scene) for e in entries], scene)
    renderer = TopDownRenderer(scene, model.image_width_px, model.image_height_px)
    data = encode_entries(entries, seeds, scene, vocab, model, renderer, progress, "training")
    return vocab, data, entries


def _batch(data: TrainingData, rows: Sequence[int]) -> tuple[torch.Tensor, ...]:
    words = torch.zeros(len(rows), max(len(data.words[r]) for r in rows), dtype=torch.long)
    steps = torch.full((len(rows), max(len(data.steps[r]) for r in rows)), -100, dtype=torch.long)
    for i, r in enumerate(rows):
        words[i, : len(data.words[r])] = torch.tensor(data.words[r])
        steps[i, : len(data.steps[r])] = torch.tensor(data.steps[r])
    episodes = [data.episode[r] for r in rows]
    glimpses, views = to_tensors(data.glimpses[episodes], data.views[episodes])
    return words, glimpses, views, steps, torch.from_numpy(data.presence[episodes])


def evaluate_data(net: PlannerNet, data: TrainingData, batch_size: int = 256) -> float:
    """EM (Kitchen-R eq. 1) of greedy constrained decoding on encoded data."""
    net.eval()
    predicted: list[list[int]] = []
    allowed = torch.ones(net.head.out_features, dtype=torch.bool)
    with torch.no_grad():
        for start in range(0, len(data.words), batch_size):
            rows = list(range(start, min(start + batch_size, len(data.words))))
            words, glimpses, views, _, _ = _batch(data, rows)
            memory, pad, _ = net.encode(words, glimpses, views)
            predicted += greedy_decode(net, memory, pad, allowed)
    gold = [[str(s) for s in steps[:-1]] for steps in data.steps]
    return exact_match([[str(s) for s in p] for p in predicted], gold)


def warmup_cosine(
    optimiser: torch.optim.Optimizer, epochs: int, batches: int
) -> torch.optim.lr_scheduler.LambdaLR:
    """The planners' schedule: a linear warm-up over the first epoch, then a cosine to zero (per batch)."""
    total, warmup = epochs * batches, batches

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

    return torch.optim.lr_scheduler.LambdaLR(optimiser, schedule)


def train_planner(
    scene: Scene,
    suite: Sequence[SuiteEntry],
    *,
    config: PlannerTrainConfig | None = None,
    model: GalleyModelConfig | None = None,
    out: str | Path = V2_WEIGHTS,
    progress: Progress = print,
) -> dict[str, Any]:
    """Generate data, train, save the weights to ``out``; returns the training record (also saved)."""
    config = config or PlannerTrainConfig()
    model = model or GalleyModelConfig()
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    started = time.monotonic()
    vocab, data, _ = make_training_data(scene, suite, config, model, progress)
    validation = [e for e in suite if e.split == "train"]
    if config.validation:
        validation = validation[: config.validation]
    renderer = TopDownRenderer(scene, model.image_width_px, model.image_height_px)
    val = encode_entries(
        validation, [e.seed for e in validation], scene, vocab, model, renderer, progress, "val"
    )
    net = PlannerNet(model, vocab)
    optimiser = torch.optim.AdamW(net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    batches = math.ceil(len(data.words) / config.batch_size)
    scheduler = warmup_cosine(optimiser, config.epochs, batches)
    step_loss, presence_loss = nn.CrossEntropyLoss(ignore_index=-100), nn.BCEWithLogitsLoss()
    order_rng = random.Random(config.seed)
    dropout_rng = torch.Generator().manual_seed(config.seed)
    history = []
    val_em = 0.0
    for epoch in range(1, config.epochs + 1):
        net.train()
        order = list(range(len(data.words)))
        order_rng.shuffle(order)
        losses = []
        for b in range(batches):
            rows = order[b * config.batch_size : (b + 1) * config.batch_size]
            words, glimpses, views, steps, presence = _batch(data, rows)
            if config.word_dropout > 0:  # unknown words must not throw the model: hide some known ones
                hide = torch.rand(words.shape, generator=dropout_rng) < config.word_dropout
                names = (net.word_object[words] >= 0) | (net.word_zone[words] >= 0)  # type: ignore[index]
                words = torch.where(hide & ~names & (words > 1), torch.ones_like(words), words)
            memory, pad, zone_tokens = net.encode(words, glimpses, views)
            prefix = torch.cat([torch.full((len(rows), 1), net.start), steps[:, :-1].clamp(min=0)], dim=1)
            logits = net.decode(memory, pad, prefix)
            loss = step_loss(logits.flatten(0, 1), steps.flatten())
            loss = loss + config.presence_weight * presence_loss(net.presence(zone_tokens), presence)
            optimiser.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optimiser.step()
            scheduler.step()
            losses.append(float(loss.detach()))
        val_em = evaluate_data(net, val)
        history.append({"epoch": epoch, "loss": float(np.mean(losses)), "val_em": val_em})
        progress(
            f"epoch {epoch}/{config.epochs}: loss {np.mean(losses):.4f}, EM on the suite's train split "
            f"{val_em:.3f} ({time.monotonic() - started:.0f} s)"
        )
    record = {
        "config": asdict(config),
        "scene": scene.name,
        "samples": len(data.words),
        "episodes": len(data.views),
        "val_em_suite_train": val_em,
        "history": history,
        "seconds": round(time.monotonic() - started, 1),
        "torch": torch.__version__,
    }
    save_model(out, net, vocab, record)
    progress(
        f"saved {out} ({Path(out).stat().st_size / 1e6:.2f} MB) and {Path(out).with_suffix('.json').name}"
    )
    return record
