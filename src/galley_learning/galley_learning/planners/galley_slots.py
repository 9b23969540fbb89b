"""galley's planner v3: names are an input. Slots for the scene's names, grounding by what objects look like.

The v2 network (:mod:`.galley_model`) has the shipped kitchen's names built in: its words, its
steps ("pick the bowl") and its presence head (one output per object). v3 reads any scene:

* **delexicalised text**: every object name and zone name in the reading layer's canonical text
  (:func:`galley_core.language.reading.canonical`) is replaced by a slot token, ``<o0>`` ...
  ``<o7>`` and ``<z0>`` ... ``<z7>`` (:class:`NameSlots`). Training draws the slots of each sample
  at random, so a slot carries no meaning of its own: it is a pointer to one of the scene's names;
* **steps over slots**: ``move to the <z3> zone``, ``pick the <o1>``, ``place the <o1>``, ``<end>``;
  constrained decoding masks the slots the scene lacks and steps it does not allow, and the slots of
  the decoded steps map back to the scene's names;
* **grounding without name heads**: each object is described by what the scene file says of it
  (:func:`object_features`: shape, size, colour); the score that object k lies in zone z is a
  learned similarity between the zone's glimpse feature and the object's description
  (:meth:`SlotPlannerNet.presence`), so a colour or kind of object never seen still matches what
  the image shows. An object's word gets the slot of the zone it is seen in (a soft choice), as in v2.

A slot has one embedding: the word ``<z3>``, the glimpse token of the zone in slot 3 and an
object's place "in slot 3" share it. Weights are saved with ``"format": "slots"`` in their JSON.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from galley_core.scene import OBJECT_SHAPES, ObjectSpec, Scene
from galley_learning.planners.galley_model import END, PAD, UNK, GalleyModelConfig, _cnn, decode_steps

__all__ = [
    "FORMAT",
    "SLOTS",
    "NameSlots",
    "SlotPlannerNet",
    "SlotVocabulary",
    "load_slot_model",
    "object_features",
    "save_slot_model",
    "slot_steps",
]

#: Names of each kind a scene may have: generated kitchens have at most 7 zones and 6 objects.
SLOTS = 8
#: The ``format`` of v3 weights in their JSON (v2 files have none).
FORMAT = "slots"
_SLOT_WORD = re.compile(r"<[oz][0-9]+>|[a-z]+|[0-9]+")
#: Features of an object description (:func:`object_features`).
FEATURES = len(OBJECT_SHAPES) + 3 + 3 + 2


def slot_steps() -> tuple[str, ...]:
    """Every step over slots, and ``<end>`` last: zone moves, then picks, then places."""
    return (
        *(f"move to the <z{i}> zone" for i in range(SLOTS)),
        *(f"pick the <o{i}>" for i in range(SLOTS)),
        *(f"place the <o{i}>" for i in range(SLOTS)),
        END,
    )


def object_features(obj: ObjectSpec) -> list[float]:
    """What the scene file says an object looks like: shape (one-hot), size, rgb, height, radius (dm)."""
    shape = [float(obj.shape == s) for s in OBJECT_SHAPES]
    size = [10.0 * v for v in (*obj.size, 0.0, 0.0)[:3]]
    return [*shape, *size, *obj.rgba[:3], 10.0 * obj.height, 10.0 * obj.footprint_radius]


@dataclass(frozen=True)
class NameSlots:
    """Which slot each of a scene's names takes: ``objects[i]``, ``zones[i]`` name slot i ("": free)."""

    objects: tuple[str, ...]
    zones: tuple[str, ...]

    @staticmethod
    def of(scene: Scene, rng: random.Random | None = None) -> NameSlots:
        """The scene's names in slots: in scene order, or at random slots with ``rng`` (training).

        Raises:
            ValueError: the scene has more than :data:`SLOTS` objects or zones.
        """
        objects, zones = scene.object_names, scene.zone_names
        if len(objects) > SLOTS or len(zones) > SLOTS:
            raise ValueError(
                f"scene {scene.name!r} has {len(objects)} objects and {len(zones)} zones; galley's planner "
                f"reads at most {SLOTS} of each: choose another backend (--planner) for it"
            )

        def place(names: Sequence[str]) -> tuple[str, ...]:
            where = rng.sample(range(SLOTS), len(names)) if rng else range(len(names))
            out = [""] * SLOTS
            for slot, name in zip(where, names, strict=True):
                out[slot] = name
            return tuple(out)

        return NameSlots(place(objects), place(zones))

    def tokens(self, text: str) -> list[str]:
        """``text`` (canonical) as tokens, each name replaced by its slot token, longest names first."""
        names = [(n, f"<o{i}>") for i, n in enumerate(self.objects) if n]
        names += [(n, f"<z{i}>") for i, n in enumerate(self.zones) if n]
        for name, token in sorted(names, key=lambda p: -len(p[0])):
            text = re.sub(rf"\b{re.escape(name)}\b", f" {token} ", text)
        return _SLOT_WORD.findall(text.lower())

    def to_slots(self, step: str) -> str:
        """A scene step ("pick the bowl") as a slot step ("pick the <o2>")."""
        if step.startswith("move to the ") and step.endswith(" zone"):
            return f"move to the <z{self.zones.index(step[12:-5])}> zone"
        action, _, name = step.partition(" the ")
        return f"{action} the <o{self.objects.index(name)}>"

    def from_slots(self, step: str) -> str:
        """A slot step as the scene's step ("" when its slot holds no name)."""
        match = re.search(r"<([oz])([0-9]+)>", step)
        if not match:
            return step
        name = (self.objects if match[1] == "o" else self.zones)[int(match[2])]
        return step.replace(match[0], name) if name else ""

    def features(self, scene: Scene) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """(SLOTS, FEATURES) float32 object descriptions in slot order (zeros where free), used mask."""
        out = np.zeros((SLOTS, FEATURES), dtype=np.float32)
        for i, name in enumerate(self.objects):
            if name:
                out[i] = object_features(scene.object(name))
        return out, np.array([bool(n) for n in self.objects])


@dataclass(frozen=True)
class SlotVocabulary:
    """Words of delexicalised instructions (slot tokens included) and the slot steps."""

    words: tuple[str, ...]
    steps: tuple[str, ...]

    def encode(self, tokens: Sequence[str], max_words: int) -> list[int]:
        """Word ids of ``tokens`` (unknown words map to ``<unk>``), at most ``max_words``."""
        index = {w: i for i, w in enumerate(self.words)}
        return [index.get(w, 1) for w in tokens][:max_words]

    @staticmethod
    def build(token_lists: Sequence[Sequence[str]]) -> SlotVocabulary:
        """Every word of ``token_lists`` and every slot token."""
        slots = [f"<o{i}>" for i in range(SLOTS)] + [f"<z{i}>" for i in range(SLOTS)]
        words = sorted({w for t in token_lists for w in t} - set(slots))
        return SlotVocabulary(words=(PAD, UNK, *slots, *words), steps=slot_steps())


class SlotPlannerNet(nn.Module):
    """The v3 planner network. Shapes: B batch, W words, Z = O = SLOTS, F features, S steps so far.

    Args:
        config: architecture (:class:`~galley_learning.planners.galley_model.GalleyModelConfig`).
        vocab: words and slot steps.
    """

    def __init__(self, config: GalleyModelConfig, vocab: SlotVocabulary):
        super().__init__()
        d = config.d_model
        self.config = config
        self.first_object, self.first_zone = 2, 2 + SLOTS  # word ids of <o0> and <z0>
        index = {w: i for i, w in enumerate(vocab.words)}
        is_object = [index.get(f"<o{i}>") for i in range(SLOTS)]
        is_zone = [index.get(f"<z{i}>") for i in range(SLOTS)]
        if is_object != list(range(2, 2 + SLOTS)) or is_zone != list(range(2 + SLOTS, 2 + 2 * SLOTS)):
            raise ValueError("slot vocabulary: <o0>..<o7> and <z0>..<z7> must follow <pad> and <unk>")
        g = config.glimpse_px // 8  # three 2x poolings
        self.glimpse_cnn = _cnn((3, 16, 32, 32))
        self.glimpse_proj = nn.Linear(32 * g * g, d)
        self.global_cnn = _cnn((3, 16, 32, 32))
        self.global_pool = nn.AdaptiveAvgPool2d((3, 4))
        self.global_proj = nn.Linear(32, d)
        self.global_pos = nn.Parameter(torch.zeros(12, d))
        self.describe = nn.Sequential(nn.Linear(FEATURES, d), nn.ReLU(), nn.Linear(d, d))
        self.query, self.key = nn.Linear(d, d), nn.Linear(d, d)
        self.presence_bias = nn.Parameter(torch.zeros(()))
        self.word_embed = nn.Embedding(len(vocab.words), d, padding_idx=0)
        self.word_pos = nn.Embedding(config.max_words, d)
        self.type_embed = nn.Embedding(3, d)  # text, zone glimpse, whole view
        layer = nn.TransformerEncoderLayer(d, config.heads, 4 * d, config.dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, config.encoder_layers, enable_nested_tensor=False)
        self.step_embed = nn.Embedding(len(vocab.steps) + 1, d)  # + <start>
        self.step_pos = nn.Embedding(config.max_steps + 1, d)
        dec = nn.TransformerDecoderLayer(d, config.heads, 4 * d, config.dropout, batch_first=True)
        self.decoder = nn.TransformerDecoder(dec, config.decoder_layers)
        self.head = nn.Linear(d, len(vocab.steps))
        self.start = len(vocab.steps)

    def slot_embed(self, kind: str) -> torch.Tensor:
        """(SLOTS, d): the embeddings of the object (``"o"``) or zone (``"z"``) slot tokens."""
        first = self.first_object if kind == "o" else self.first_zone
        return self.word_embed.weight[first : first + SLOTS]

    def see(
        self, glimpses: torch.Tensor, view: torch.Tensor, zone_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """What the images show: glimpse features (E, Z, d) and whole-view tokens (E, 12, d).

        From (E, Z, 3, G, G) glimpses and (E, 3, H, W) views; features are zeros where ``zone_mask``
        (E, Z) is false.

        Computed once per image: the samples of a batch that share an episode share them.
        """
        g = self.glimpse_cnn(glimpses[zone_mask] - 0.5).flatten(1)
        seen = torch.zeros(*glimpses.shape[:2], self.glimpse_proj.out_features)
        seen[zone_mask] = self.glimpse_proj(g)
        grid = self.global_pool(self.global_cnn(view - 0.5)).flatten(2).transpose(1, 2)
        view_tokens = self.global_proj(grid) + self.global_pos[None] + self.type_embed.weight[2]
        return seen, view_tokens

    def presence(self, seen: torch.Tensor, objects: torch.Tensor, zone_mask: torch.Tensor) -> torch.Tensor:
        """(B, Z, O) logits that object o lies in zone z: glimpse features (B, Z, d) x descriptions (B, O, F).

        Zones the scene lacks (``zone_mask`` (B, Z) false) get a very low logit.
        """
        q, k = self.query(seen), self.key(self.describe(objects))
        logits = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]) + self.presence_bias
        return logits.masked_fill(~zone_mask[..., None], -1e4)

    def encode(  # noqa: PLR0917 -- the network's inputs, each named
        self,
        words: torch.Tensor,
        seen: torch.Tensor,
        view_tokens: torch.Tensor,
        objects: torch.Tensor,
        zone_mask: torch.Tensor,
        place: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Memory (B, W + Z + 12, d), its padding mask, and the presence logits (B, Z, O).

        Args:
            words: (B, W) word ids, 0 = padding.
            seen: (B, Z, d) glimpse features (:meth:`see`) in zone-slot order.
            view_tokens: (B, 12, d) whole-view tokens (:meth:`see`).
            objects: (B, O, F) object descriptions in object-slot order.
            zone_mask: (B, Z) true for the slots that hold a zone of the scene.
            place: (B, O, Z) where each object lies, as weights over zones; default: the softmax of
                the presence logits over zones (training), the planner gives a joint assignment.
        """
        b = words.shape[0]
        zone_tokens = seen + self.slot_embed("z")[None] + self.type_embed.weight[1]
        positions = torch.arange(words.shape[1], device=words.device)
        text = self.word_embed(words) + self.word_pos(positions)[None] + self.type_embed.weight[0]
        # An object's word gets the slot of the zone the image shows it in (a soft choice over zones).
        logits = self.presence(seen, objects, zone_mask)
        weights = logits.softmax(dim=1).transpose(1, 2) if place is None else place
        place = weights @ self.slot_embed("z")  # (B, O, d)
        slot = words - self.first_object
        is_object = (slot >= 0) & (slot < SLOTS)
        grounded = torch.gather(place, 1, slot.clamp(0, SLOTS - 1)[..., None].expand(-1, -1, place.shape[2]))
        text = text + torch.where(is_object[..., None], grounded, 0.0)
        tokens = torch.cat([text, zone_tokens, view_tokens], dim=1)
        pad = torch.cat([words == 0, ~zone_mask, torch.zeros(b, view_tokens.shape[1], dtype=torch.bool)], 1)
        return self.encoder(tokens, src_key_padding_mask=pad), pad, logits

    def decode(self, memory: torch.Tensor, pad: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        """Step logits (B, S, steps) after each prefix position; ``prefix`` (B, S) starts with <start>."""
        return decode_steps(self, memory, pad, prefix)


def save_slot_model(
    path: str | Path, net: SlotPlannerNet, vocab: SlotVocabulary, training: dict[str, Any]
) -> None:
    """Weights to ``path`` (.pt, half precision); format, vocabulary, model, training record (.json)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    torch.save({k: v.half() if v.is_floating_point() else v for k, v in net.state_dict().items()}, p)
    meta = {"format": FORMAT, "model": asdict(net.config), "vocabulary": asdict(vocab), "training": training}
    p.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")


def load_slot_model(path: str | Path) -> tuple[SlotPlannerNet, SlotVocabulary, dict[str, Any]]:
    """The v3 network (eval mode), its vocabulary and its training record.

    Raises:
        FileNotFoundError: the weights or their JSON are missing, naming the fix.
        ValueError: the file holds weights of another format (v2), naming the fix.
    """
    p = Path(path)
    meta_path = p.with_suffix(".json")
    if not p.is_file() or not meta_path.is_file():
        raise FileNotFoundError(
            f"no galley planner weights at {p} (and {meta_path.name}); train them with: galley train-planner"
        )
    meta = json.loads(meta_path.read_text())
    if meta.get("format") != FORMAT:
        raise ValueError(
            f"{p} holds galley planner v2 weights (one scene's names built in), not v3 slot weights"
        )
    names = {f.name for f in fields(GalleyModelConfig)}
    config = GalleyModelConfig(**{k: v for k, v in meta["model"].items() if k in names})
    v = meta["vocabulary"]
    vocab = SlotVocabulary(tuple(v["words"]), tuple(v["steps"]))
    net = SlotPlannerNet(config, vocab)
    state = torch.load(p, map_location="cpu", weights_only=True)
    net.load_state_dict({k: t.float() if t.is_floating_point() else t for k, t in state.items()})
    net.eval()
    return net, vocab, meta.get("training", {})
