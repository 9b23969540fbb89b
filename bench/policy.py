"""Inference latency of the diffusion policy per action chunk: DDIM sampling against full DDPM.

    python bench/policy.py [--quick] [--device auto|cpu|cuda] [--threads N]

For each network size (toy, small, base; --quick: toy and small) builds an untrained policy with
the dataset's shapes (two cameras at 96x72, history 2, 16 actions of 10 values) and times one
action chunk: encoding the observations, then denoising with DDIM in ``inference_steps`` (10)
steps, the policy node's setting, and with DDPM's full ``diffusion_steps`` chain as the baseline
Diffusion Policy started from. Latency does not depend on the weights, so none are trained.
Prints a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np
import torch

from galley_core.arguments import add_arguments, config_from_arguments
from galley_learning.policy.model import SIZES, DiffusionPolicy, pick_device, tokenize, with_vocabulary
from galley_nodes.nodes.diffusion_policy import DiffusionPolicyConfig


def _chunk_ms(model: DiffusionPolicy, device: torch.device, *, ddpm: bool, repeats: int) -> float:
    c = model.config
    w, h = c.image_size
    images = {cam: torch.rand(1, c.obs_horizon, 3, h, w, device=device) for cam in c.cameras}
    state = torch.zeros(1, c.obs_horizon, c.state_dim, device=device)
    words = torch.tensor([tokenize("pick the bowl", c.vocabulary)], device=device)
    if ddpm:
        model.sample_scheduler, saved = model.train_scheduler, model.sample_scheduler
        model.config = replace(c, inference_steps=c.diffusion_steps)
    times = []
    with torch.no_grad():
        for i in range(repeats + 1):
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            model.sample(model.encode(images, state, words))
            if device.type == "cuda":
                torch.cuda.synchronize()
            if i:  # the first call warms up
                times.append(time.perf_counter() - start)
    if ddpm:
        model.sample_scheduler, model.config = saved, c
    return float(np.median(times) * 1000.0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="toy and small only, fewer repeats")
    # the policy node's settings; the bench's device: the GPU where there is one
    options = ("device", "cpu_threads")
    aliases = {"cpu_threads": ["--threads"]}
    add_arguments(parser, DiffusionPolicyConfig, only=options, aliases=aliases, defaults={"device": "auto"})
    args = parser.parse_args()
    node = config_from_arguments(DiffusionPolicyConfig, args, fields=options)
    if node.cpu_threads > 0:
        torch.set_num_threads(node.cpu_threads)
    device = pick_device(node.device)
    sizes = ["toy", "small"] if args.quick else list(SIZES)
    repeats = 3 if args.quick else 5
    vocabulary = [
        "move",
        "to",
        "the",
        "zone",
        "pick",
        "place",
        "apple",
        "bowl",
        "cup",
        "fork",
        "plate",
        "blue",
        "green",
    ]
    rows = {}
    for size in sizes:
        model = DiffusionPolicy(with_vocabulary(SIZES[size], vocabulary)).to(device).eval()
        ddim = _chunk_ms(model, device, ddpm=False, repeats=repeats)
        ddpm = _chunk_ms(model, device, ddpm=True, repeats=max(1, repeats // 2))
        rows[size] = {
            "parameters": sum(p.numel() for p in model.parameters()),
            "ddim_ms": ddim,
            "ddpm_ms": ddpm,
            "steps": (model.config.inference_steps, model.config.diffusion_steps),
        }
    threads = torch.get_num_threads()
    print(f"diffusion policy, one action chunk (16 x 10) on {device} ({threads} CPU thread(s))")
    print(f"{'size':>6} {'parameters':>11} {'DDIM ms':>9} {'DDPM ms':>9} {'speed-up':>9}")
    for size, r in rows.items():
        steps = f"({r['steps'][0]} vs {r['steps'][1]} steps)"
        print(
            f"{size:>6} {r['parameters']:>11,} {r['ddim_ms']:>9.1f} {r['ddpm_ms']:>9.1f} "
            f"{r['ddpm_ms'] / r['ddim_ms']:>8.1f}x {steps}"
        )
    figures: dict[str, float] = {}
    for size, r in rows.items():
        figures[f"chunk_ms_ddim_{size}"] = round(r["ddim_ms"], 2)
        figures[f"speedup_ddim_vs_ddpm_{size}"] = round(r["ddpm_ms"] / r["ddim_ms"], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
