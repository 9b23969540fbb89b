"""The network of galley's vision-language task planner: small enough to ship, trained on generated episodes.

The network (:class:`PlannerNet`) reads

* the **top-down image**: a small CNN encodes one glimpse per zone (the image around the zone's
  centre, where objects lie; see :func:`~galley_learning.planners.images.zone_glimpses`) into a
  zone token, and a second CNN encodes the whole downscaled view into a 4 x 3 grid of tokens;
* the **instruction**: word tokens with learned embeddings;

grounds the names in the instruction (an object's word gets the zone where the image shows that
object, as a soft choice over zones from the glimpses; a zone's word gets that zone), fuses all
tokens with a transformer encoder, and decodes the plan autoregressively over a
step-level vocabulary (the training scene's valid steps + ``<end>``). Constrained decoding is then
exact: at every position the logits of steps the current scene does not allow are masked, so only
valid steps can come out, and ``<end>`` is allowed after one step and forced after ``max_steps``.
During training an auxiliary head predicts which objects lie in each zone from its glimpse.

The weights are saved and loaded here (:func:`save_model`, :func:`load_model`); the ``galley``
backend that plans with them is :class:`galley_learning.planners.galley_planner.GalleyPlanner`.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from galley_core.config import Config, param
from galley_core.scene import Scene
from galley_core.tasks.grammar import valid_steps
from galley_learning.planners.images import resize, zone_glimpses

__all__ = [
    "DEFAULT_WEIGHTS",
    "END",
    "V2_WEIGHTS",
    "V3_WEIGHTS",
    "GalleyModelConfig",
    "PlannerNet",
    "Vocabulary",
    "decode_steps",
    "load_model",
    "save_model",
    "tokenize",
]

#: The v2 weights (the shipped kitchen's names built in).
V2_WEIGHTS = Path(__file__).resolve().parent / "weights" / "galley_planner_v2.pt"
#: The v3 weights (names from the scene, :mod:`.galley_slots`): not the default yet, because in the
#: shipped kitchen they plan a little worse than v2 (docs/planner-names.md).
V3_WEIGHTS = Path(__file__).resolve().parent / "weights" / "galley_planner_v3.pt"
#: The weights the ``galley`` backend loads unless told otherwise.
DEFAULT_WEIGHTS = V2_WEIGHTS
END = "<end>"
PAD, UNK = "<pad>", "<unk>"
_WORD = re.compile(r"[a-z]+|[0-9]+")


@dataclass(frozen=True)
class GalleyModelConfig(Config):
    """Architecture and input format of galley's planner network (stored with its weights)."""

    image_width_px: int = param(
        640, "width the top-down image is resized to before encoding", unit="px", ge=32
    )
    image_height_px: int = param(480, "height the top-down image is resized to", unit="px", ge=24)
    glimpse_side_m: float = param(
        0.5, "side of the square around each zone centre that a glimpse shows", unit="m", gt=0.0
    )
    glimpse_px: int = param(32, "glimpse resolution (square)", unit="px", ge=8, le=128)
    global_width_px: int = param(
        32, "width of the whole-view image given to the global CNN", unit="px", ge=16
    )
    global_height_px: int = param(24, "height of the whole-view image", unit="px", ge=12)
    d_model: int = param(96, "token width", ge=8)
    heads: int = param(4, "attention heads", ge=1)
    encoder_layers: int = param(2, "transformer encoder layers over text and image tokens", ge=1)
    decoder_layers: int = param(2, "transformer decoder layers over plan steps", ge=1)
    max_words: int = param(40, "longest instruction in words (longer ones are cut)", ge=4)
    max_steps: int = param(8, "longest plan in steps", ge=1)
    dropout: float = param(0.1, "dropout probability while training", ge=0.0, lt=1.0)  # fmt: skip


def tokenize(text: str) -> list[str]:
    """Lower-case words and numbers of ``text``."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Vocabulary:
    """Words of instructions, steps of plans, and the scene the model was trained on."""

    words: tuple[str, ...]
    steps: tuple[str, ...]
    zones: tuple[str, ...]
    objects: tuple[str, ...]
    scene: str

    def encode(self, text: str, max_words: int) -> list[int]:
        """Word ids of ``text`` (unknown words map to ``<unk>``), at most ``max_words``."""
        index = {w: i for i, w in enumerate(self.words)}
        return [index.get(w, 1) for w in tokenize(text)][:max_words]

    @staticmethod
    def build(texts: Sequence[str], scene: Scene) -> Vocabulary:
        """A vocabulary of every word in ``texts`` and the scene's names, and the scene's steps."""
        words = sorted(
            {w for t in texts for w in tokenize(t)} | set(scene.zone_names) | set(scene.object_names)
        )
        return Vocabulary(
            words=(PAD, UNK, *words),
            steps=(*valid_steps(scene), END),
            zones=tuple(scene.zone_names),
            objects=tuple(scene.object_names),
            scene=scene.name,
        )


def _index(names: Sequence[str], word: str) -> int:
    return names.index(word) if word in names else -1


def _cnn(channels: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for c_in, c_out in itertools.pairwise(channels):
        layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(), nn.MaxPool2d(2)]
    return nn.Sequential(*layers)


class PlannerNet(nn.Module):
    """The planner network. Shapes: B batch, W words, Z zones, S steps so far.

    Args:
        config: architecture.
        vocab_words, vocab_steps: sizes of the word and step vocabularies (steps include ``<end>``).
        zones, objects: numbers of zones and objects of the training scene.
    """

    def __init__(self, config: GalleyModelConfig, vocab: Vocabulary):
        super().__init__()
        vocab_words, vocab_steps = len(vocab.words), len(vocab.steps)
        zones, objects = len(vocab.zones), len(vocab.objects)
        # Which object / zone each word names (-1: none): the grounding of names in the image.
        self.register_buffer("word_object", torch.tensor([_index(vocab.objects, w) for w in vocab.words]))
        self.register_buffer("word_zone", torch.tensor([_index(vocab.zones, w) for w in vocab.words]))
        d = config.d_model
        self.config = config
        g = config.glimpse_px // 8  # three 2x poolings
        self.glimpse_cnn = _cnn((3, 16, 32, 32))
        self.glimpse_proj = nn.Linear(32 * g * g, d)
        self.global_cnn = _cnn((3, 16, 32, 32))
        self.global_pool = nn.AdaptiveAvgPool2d((3, 4))
        self.global_proj = nn.Linear(32, d)
        self.zone_embed = nn.Embedding(zones, d)
        self.place_embed = nn.Embedding(zones + 1, d)  # where a named thing is: a zone, or none
        self.global_pos = nn.Parameter(torch.zeros(12, d))
        self.word_embed = nn.Embedding(vocab_words, d, padding_idx=0)
        self.word_pos = nn.Embedding(config.max_words, d)
        self.type_embed = nn.Embedding(3, d)  # text, zone glimpse, whole view
        layer = nn.TransformerEncoderLayer(d, config.heads, 4 * d, config.dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, config.encoder_layers, enable_nested_tensor=False)
        self.step_embed = nn.Embedding(vocab_steps + 1, d)  # + <start>
        self.step_pos = nn.Embedding(config.max_steps + 1, d)
        dec = nn.TransformerDecoderLayer(d, config.heads, 4 * d, config.dropout, batch_first=True)
        self.decoder = nn.TransformerDecoder(dec, config.decoder_layers)
        self.head = nn.Linear(d, vocab_steps)
        self.presence_head = nn.Linear(d, objects)
        self.start = vocab_steps
        self.zones = zones

    def encode(
        self, words: torch.Tensor, glimpses: torch.Tensor, view: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Memory tokens, their padding mask, and zone tokens.

        Args:
            words: (B, W) word ids, 0 = padding.
            glimpses: (B, Z, 3, G, G) float glimpses in [0, 1].
            view: (B, 3, H, W) float whole view in [0, 1].

        Returns:
            memory (B, W + Z + 12, d), padding mask (B, W + Z + 12) true where padded, zone tokens (B, Z, d).
        """
        b, z = glimpses.shape[:2]
        zone_tokens = self.zone_tokens(glimpses)
        grid = self.global_pool(self.global_cnn(view - 0.5)).flatten(2).transpose(1, 2)
        view_tokens = self.global_proj(grid) + self.global_pos[None] + self.type_embed.weight[2]
        positions = torch.arange(words.shape[1], device=words.device)
        text = self.word_embed(words) + self.word_pos(positions)[None] + self.type_embed.weight[0]
        # Ground names: an object's word gets the place where the image shows it (a soft choice
        # over zones from the presence head), a zone's word gets that zone's place.
        where = self.presence(zone_tokens).softmax(dim=1).transpose(1, 2)  # (B, objects, Z)
        object_place = where @ self.place_embed.weight[: self.zones]  # (B, objects, d)
        obj = self.word_object[words]  # type: ignore[index]
        zone = self.word_zone[words]  # type: ignore[index]
        grounded = torch.gather(
            object_place, 1, obj.clamp(min=0)[..., None].expand(-1, -1, object_place.shape[2])
        )
        text = text + torch.where((obj >= 0)[..., None], grounded, 0.0)
        text = text + torch.where((zone >= 0)[..., None], self.place_embed(zone.clamp(min=0)), 0.0)
        tokens = torch.cat([text, zone_tokens, view_tokens], dim=1)
        pad = torch.cat([words == 0, torch.zeros(b, z + view_tokens.shape[1], dtype=torch.bool)], dim=1)
        return self.encoder(tokens, src_key_padding_mask=pad), pad, zone_tokens

    def zone_tokens(self, glimpses: torch.Tensor) -> torch.Tensor:
        """(B, Z, d) zone tokens from (B, Z, 3, G, G) glimpses."""
        b, z = glimpses.shape[:2]
        g = self.glimpse_cnn(glimpses.flatten(0, 1) - 0.5).flatten(1)
        tokens: torch.Tensor = self.glimpse_proj(g).view(b, z, -1)
        return tokens + self.zone_embed.weight[None] + self.type_embed.weight[1]

    def decode(self, memory: torch.Tensor, pad: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        """Step logits (B, S, steps) after each prefix position; ``prefix`` (B, S) starts with <start>."""
        return decode_steps(self, memory, pad, prefix)

    def presence(self, zone_tokens: torch.Tensor) -> torch.Tensor:
        """(B, Z, objects) logits that each object lies in each zone (the auxiliary head)."""
        logits: torch.Tensor = self.presence_head(zone_tokens)
        return logits


def decode_steps(
    net: nn.Module, memory: torch.Tensor, pad: torch.Tensor, prefix: torch.Tensor
) -> torch.Tensor:
    """Step logits (B, S, steps) of a planner network (v2 or v3) after each position of ``prefix``.

    ``net`` has ``step_embed``, ``step_pos``, ``decoder`` and ``head``; ``prefix`` (B, S) starts with
    <start>; ``memory`` and ``pad`` are its encoder's output and padding mask.
    """
    s = prefix.shape[1]
    x = net.step_embed(prefix) + net.step_pos(torch.arange(s))[None]
    causal = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
    out = net.decoder(x, memory, tgt_mask=causal, memory_key_padding_mask=pad)
    logits: torch.Tensor = net.head(out)
    return logits


def image_inputs(
    scene: Scene, image: np.ndarray[Any, Any], config: GalleyModelConfig
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(glimpses (Z, G, G, 3), whole view (h, w, 3)) uint8 from a top-down image of any size."""
    canonical = resize(image, config.image_width_px, config.image_height_px)
    glimpses = zone_glimpses(scene, canonical, side_m=config.glimpse_side_m, size_px=config.glimpse_px)
    return glimpses, resize(canonical, config.global_width_px, config.global_height_px)


def to_tensors(
    glimpses: np.ndarray[Any, Any], view: np.ndarray[Any, Any]
) -> tuple[torch.Tensor, torch.Tensor]:
    """uint8 (..., Z, G, G, 3), (..., h, w, 3) arrays as float (..., Z, 3, G, G), (..., 3, h, w) in [0, 1]."""
    g = torch.from_numpy(np.array(glimpses)).float().div(255.0).movedim(-1, -3)
    v = torch.from_numpy(np.array(view)).float().div(255.0).movedim(-1, -3)
    return g, v


@torch.no_grad()
def greedy_decode(
    net: PlannerNet, memory: torch.Tensor, pad: torch.Tensor, allowed: torch.Tensor
) -> list[list[int]]:
    """Greedy plans (step ids, without <end>) under the mask ``allowed`` (steps,) of valid step ids.

    ``<end>`` (the last id) is not allowed at the first position and forced after ``max_steps``.
    """
    b = memory.shape[0]
    end = net.head.out_features - 1
    prefix = torch.full((b, 1), net.start, dtype=torch.long)
    done = torch.zeros(b, dtype=torch.bool)
    plans: list[list[int]] = [[] for _ in range(b)]
    for position in range(net.config.max_steps + 1):
        logits = net.decode(memory, pad, prefix)[:, -1]
        mask = allowed.clone()
        mask[end] = position > 0
        if position == net.config.max_steps:
            mask[:] = False
            mask[end] = True
        choice = logits.masked_fill(~mask, float("-inf")).argmax(-1)
        for i in range(b):
            if not done[i] and int(choice[i]) != end:
                plans[i].append(int(choice[i]))
        done |= choice == end
        if bool(done.all()):
            break
        prefix = torch.cat([prefix, choice[:, None]], dim=1)
    return plans


def save_model(path: str | Path, net: PlannerNet, vocab: Vocabulary, training: dict[str, Any]) -> None:
    """Weights to ``path`` (.pt) and the vocabulary, architecture and training record beside it (.json)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    torch.save({k: v.half() if v.is_floating_point() else v for k, v in net.state_dict().items()}, p)
    meta = {"model": asdict(net.config), "vocabulary": asdict(vocab), "training": training}
    p.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")


def load_model(path: str | Path = V2_WEIGHTS) -> tuple[PlannerNet, Vocabulary, dict[str, Any]]:
    """The v2 network (eval mode), its vocabulary and its training record.

    Raises:
        FileNotFoundError: the weights or their JSON are missing, naming the fix.
        ValueError: the file holds v3 weights (load those with ``galley_slots.load_slot_model``).
    """
    p = Path(path)
    meta_path = p.with_suffix(".json")
    if not p.is_file() or not meta_path.is_file():
        raise FileNotFoundError(
            f"no galley planner weights at {p} (and {meta_path.name}); train them with: galley train-planner"
        )
    meta = json.loads(meta_path.read_text())
    if "format" in meta:
        raise ValueError(f"{p} holds galley planner weights of format {meta['format']!r}, not v2")
    names = {f.name for f in fields(GalleyModelConfig)}
    config = GalleyModelConfig(**{k: v for k, v in meta["model"].items() if k in names})
    v = meta["vocabulary"]
    vocab = Vocabulary(*(tuple(v[k]) for k in ("words", "steps", "zones", "objects")), scene=v["scene"])
    net = PlannerNet(config, vocab)
    state = torch.load(p, map_location="cpu", weights_only=True)
    net.load_state_dict({k: t.float() if t.is_floating_point() else t for k, t in state.items()})
    net.eval()
    return net, vocab, meta.get("training", {})
