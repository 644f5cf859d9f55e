"""Scorer-catalogue throughput: our batched `score_metrics` vs a per-sample loop over the same scorer, in one run.

The reference repositories score one sample per call (t2v_metrics' and OpenS2V's evaluation scripts loop over
(image, prompt) pairs); the loop here does exactly that with our scorer (`scorer.score([sample])` per sample),
so both sides run the same model and the same preprocessing and must give the same numbers (checked: the largest
difference is printed). Both sides start from empty caches.

Each row of `WORKLOADS` is one (metric, checkpoint) pair: the demo checkpoint (tiny, what the demo profile runs)
and a seeded random checkpoint of base size built once in --workdir. Other metrics add their rows to `WORKLOADS`
(a `Workload` says how to build its checkpoint, which settings point at it, and its samples).

    python bench/catalogue_throughput.py                    # every workload, 16 samples (2 batches of 8)
    python bench/catalogue_throughput.py --only vqascore-chat-demo --samples 8 --threads 1

Not a test: numbers depend on the machine and its load; the ratio measured side by side is what to read.
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from masc_ui.imaging import as_input_image  # noqa: E402
from masc_ui.metrics.registry import get_scorer, score_metrics  # noqa: E402
from masc_ui.metrics.sample import Sample  # noqa: E402
from masc_ui.models.registry import ModelRegistry  # noqa: E402
from masc_ui.settings import Settings  # noqa: E402
from workloads import random_image  # noqa: E402

PROMPTS = [
    "a photo of a {} on a sandy beach at sunset", "a {} in a snowy forest", "a {} on a wooden table in a kitchen",
    "a {} floating in outer space with stars", "a watercolor painting of a {}", "a {} in the style of pixel art",
    "an oil painting of a {} in a museum", "a {} made of glass on a city street", "a giant {} next to the Eiffel tower",
]
SUBJECTS = ["kitten", "backpack", "teapot", "robot toy", "sneaker"]
BATCH = 8
"""The engines' batch size (VQAScore, ITMScore)."""

QWEN_BASE = dict(text=dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                           num_key_value_heads=2, rope_scaling={"type": "mrope", "mrope_section": [8, 12, 12]}),
                 vision=dict(depth=8, hidden_size=640, intermediate_size=1280, num_heads=10,
                             fullatt_block_indexes=[3, 7]),
                 max_pixels=256 * 256, vocab_size=151936)
"""Qwen2.5-VL-shaped, base size: the language model of Qwen2-0.5B (896 wide, 24 layers, full 151936-token vocabulary)
and a ViT of 8 layers x 640 (the 3B/7B models have 32 x 1280 and a 2048/3584-wide LM); images up to 256 x 256."""
BLIP2_BASE = dict(vision=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                              patch_size=14),
                  qformer=dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072))
"""BLIP-2 ITM with a ViT-B/14 at 224 (257 tokens; blip2-itm-vit-g has ViT-g: 1408 x 39) and the real Q-Former size
(BERT-base: 768 x 12)."""


@dataclass(frozen=True)
class Workload:
    """One benchmark row: `metric` scored with the checkpoint that `build(workdir, device) -> Settings` prepares."""

    name: str
    metric: str
    build: Callable[[Path, str], Settings]
    image_size: tuple[int, int] = (512, 512)


def demo_settings(workdir: Path, device: str, **models: str) -> Settings:
    """Demo profile on CPU/float32 with the demo checkpoints under `workdir/demo`; `models` override settings
    with demo folder names, e.g. `vqa_model="qwen2.5-vl"`."""
    weights = workdir / "demo"
    from masc_ui.models.demo import write_demo_weights

    write_demo_weights(weights, list(models.values()))
    return Settings(profile="demo", demo_weights_dir=weights, device=device, dtype="float32",
                    **{k: str(weights / v) for k, v in models.items()})


def random_checkpoint(workdir: Path, name: str, builder: Callable[..., None], **sizes) -> Path:
    """A seeded random checkpoint built once under `workdir/name`."""
    path = workdir / name
    if not (path / "config.json").exists():
        print(f"building {name} in {path} (once) ...", flush=True)
        tmp = workdir / f".building-{name}"
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        builder(tmp, 0, **sizes)
        tmp.rename(path)
    return path


def _qwen_base(workdir: Path, device: str) -> Settings:
    from masc_ui.models.demo.qwen_vl import build

    path = random_checkpoint(workdir, "qwen2.5-vl-base-random", build, **QWEN_BASE)
    return demo_settings(workdir, device).replace(vqa_model=str(path))


def _blip2_base(workdir: Path, device: str) -> Settings:
    from masc_ui.models.demo.blip2_itm import build

    path = random_checkpoint(workdir, "blip2-itm-base-random", build, **BLIP2_BASE)
    return demo_settings(workdir, device).replace(itm_model=str(path))


WORKLOADS: list[Workload] = [
    Workload("vqascore-chat-demo", "vqascore", lambda w, d: demo_settings(w, d, vqa_model="qwen2.5-vl")),
    Workload("vqascore-chat-base", "vqascore", _qwen_base),
    Workload("itmscore-demo", "itmscore", lambda w, d: demo_settings(w, d, itm_model="blip2-itm")),
    Workload("itmscore-base", "itmscore", _blip2_base),
]


def samples_for(workload: Workload, n: int, seed: int) -> list[Sample]:
    """`n` outputs, each its own image with its own prompt (no image shared: the batching gain alone). The images
    come decoded and hashed once (`InputImage`), as the workbench hands them to scorers."""
    rng = np.random.default_rng(seed)
    return [Sample(refs=(), out=as_input_image(random_image(rng, workload.image_size)),
                   prompt=PROMPTS[i % len(PROMPTS)].format(SUBJECTS[i % len(SUBJECTS)])) for i in range(n)]


def clear(scorer) -> None:
    """Empty the scorer's caches (image encodings and results)."""
    scorer.backbone().clear_caches()


def run(workload: Workload, workdir: Path, device: str, n: int, repeats: int) -> tuple[float, float, float]:
    """(loop seconds, batched seconds, largest |difference|) for `n` samples: the best of `repeats` alternating
    runs of each side (a shared machine's load comes and goes; the best run is the least disturbed)."""
    settings = workload.build(workdir, device)
    models = ModelRegistry()
    scorer = get_scorer(workload.metric, settings, models)
    samples = samples_for(workload, n, seed=n)
    scorer.score(samples_for(workload, 1, seed=12345))  # untimed: loads the model, first-call costs
    loop_s = batch_s = math.inf
    for _ in range(repeats):
        clear(scorer)
        start = time.perf_counter()
        looped = [scorer.score([sample])[0].value for sample in samples]
        loop_s = min(loop_s, time.perf_counter() - start)
        clear(scorer)
        start = time.perf_counter()
        batched = [v.value for v in score_metrics(samples, workload.metric, settings, models)[workload.metric]]
        batch_s = min(batch_s, time.perf_counter() - start)
    diff = max(abs(a - b) for a, b in zip(looped, batched))
    return loop_s, batch_s, diff


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2 * BATCH, help="samples per workload (default 16)")
    parser.add_argument("--only", action="append", help="run only this workload (repeatable)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per side; the best counts")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "masc-bench",
                        help="where the checkpoints are built (and reused)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    chosen = [w for w in WORKLOADS if not args.only or w.name in args.only]
    print(f"scorer catalogue throughput: {args.samples} samples per workload, batch {BATCH}, device {args.device}, "
          f"float32, torch {torch.__version__}, {torch.get_num_threads()} threads, best of {args.repeats}\n")
    header = f"{'workload':<22}{'loop s':>9}{'batched s':>11}{'loop /s':>9}{'batched /s':>12}{'ratio':>8}{'max |d|':>10}"
    print(header)
    print("-" * len(header))
    for workload in chosen:
        loop_s, batch_s, diff = run(workload, args.workdir, args.device, args.samples, args.repeats)
        n = args.samples
        print(f"{workload.name:<22}{loop_s:>9.2f}{batch_s:>11.2f}{n / loop_s:>9.2f}{n / batch_s:>12.2f}"
              f"{loop_s / batch_s:>7.2f}x{diff:>10.1e}", flush=True)
        if math.isnan(diff):
            print("    (NaN difference: one side returned NaN where the other did not)")
    print("\ngoal: batched >= 3x the per-sample loop at batch 8 on CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
