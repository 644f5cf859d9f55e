"""Scorer-catalogue throughput: batched `score_metrics` vs a per-sample loop over the same scorer, in one run.

The per-sample loop is how the reference repositories score (OpenS2V `facesim_cur`, FaceScore's `get_reward`,
ArtScore's script with batch 1): every sample on its own, its reference processed again for every output — here
the scorer's caches are cleared before each sample so the loop recomputes exactly what the reference does.
Batched: `score_metrics` over all samples (each distinct image detected and encoded once, model forwards in
batches of --batch-size). Models are loaded before timing. Prints samples/s of both, their ratio and the largest
|difference| between the two sets of values (they must agree). Numbers depend on the machine and its load:
read the ratios, measured side by side in one run.

`WORKLOADS` lists one entry per scorer; each has the checkpoint sizes it runs with (`demo`: the tiny random
checkpoints; `base`: a random checkpoint of the released architecture, built once in --workdir).

    python bench/catalogue_throughput.py                          # every workload, demo and base sizes
    python bench/catalogue_throughput.py --only facesim --sizes base --batch-size 8
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
from PIL import Image, ImageOps

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from masc_ui.metrics.registry import get_scorer, score_metrics  # noqa: E402
from masc_ui.metrics.sample import Sample  # noqa: E402
from masc_ui.models.demo import write_demo_weights  # noqa: E402
from masc_ui.models.registry import ModelRegistry  # noqa: E402
from masc_ui.settings import Settings  # noqa: E402


@dataclass(frozen=True)
class Workload:
    """One scorer's benchmark: its metric, the samples, and the settings of each checkpoint size."""

    metric: str
    samples: Callable[[int], list[Sample]]
    """n outputs per reference -> samples."""
    sizes: dict[str, Callable[[Path], dict]]
    """size name -> build(workdir) -> Settings overrides naming that size's checkpoint."""
    clear: Callable[[object], None]
    """Empty the scorer's caches (the reference recomputes everything per sample)."""


def _faces(n: int) -> list[Sample]:
    """Two subjects (the astronaut, and her mirrored crop) x n outputs: rotated/scaled/cropped views of her."""
    from skimage import data

    base = Image.fromarray(data.astronaut())
    refs = [base, ImageOps.mirror(base).crop((40, 0, 470, 430))]
    samples = []
    for r, ref in enumerate(refs):
        for i in range(n):
            angle = -12 + 24 * i / max(1, n - 1)
            out = base.rotate(angle).resize((448 + 16 * i, 448 + 16 * i))
            samples.append(Sample(refs=(ref,), out=out if r == 0 else ImageOps.mirror(out)))
    return samples


def _art(n: int) -> list[Sample]:
    from skimage import data

    photos = [data.astronaut(), data.coffee(), data.chelsea(), data.rocket()]
    return [Sample(refs=(), out=Image.fromarray(photos[i % 4]).rotate(5 * i)) for i in range(2 * n)]


def _ir101(workdir: Path) -> dict:
    from masc_ui.metrics.faces.recognizer import IR101_UNITS, IR101_WIDTHS, RELEASED_FILE, IRArchitecture, IRBackbone

    path = workdir / "ir101-random" / RELEASED_FILE
    if not path.exists():
        print(f"building a random IR-101 in {path} (once) ...", flush=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(0)
        torch.save(IRBackbone(IRArchitecture(64, IR101_UNITS, IR101_WIDTHS, 512)).state_dict(), path)
    return {"face_recognizer": str(path)}


def _resnet50(workdir: Path) -> dict:
    from masc_ui.metrics.artscore import RELEASED_FILE, build_artscore_network

    path = workdir / "artscore-random" / RELEASED_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(0)
        torch.save(build_artscore_network().state_dict(), path)
    return {"artscore_checkpoint": str(path)}


def _clear_face_caches(backbone) -> None:
    backbone.detection.cache.clear()
    getattr(backbone, "embedding_cache", getattr(backbone, "cache", None)).clear()


WORKLOADS: list[Workload] = [
    Workload("facesim", _faces, {"demo": lambda w: {}, "base": _ir101}, _clear_face_caches),
    Workload("facescore", _faces, {"demo": lambda w: {}}, _clear_face_caches),
    Workload("artscore", _art, {"demo": lambda w: {}, "base": _resnet50}, lambda b: b.cache.clear()),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=[w.metric for w in WORKLOADS], help="workloads to run")
    parser.add_argument("--sizes", nargs="+", default=["demo", "base"], help="checkpoint sizes to run")
    parser.add_argument("--outputs", type=int, default=8, help="outputs per reference (2 references)")
    parser.add_argument("--batch-size", type=int, default=8, help="model batch size and score_metrics chunk")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "masc-bench")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    demo_dir = args.workdir / "demo-weights"
    write_demo_weights(demo_dir)
    print(f"catalogue throughput: batch {args.batch_size}, device {args.device}, float32, "
          f"{torch.get_num_threads()} threads\n")
    header = f"{'metric':<11}{'size':<6}{'n':>4}{'loop/s':>9}{'batched/s':>11}{'ratio':>8}{'max |d|':>10}  detector"
    rows = []
    for workload in WORKLOADS:
        if args.only and workload.metric not in args.only:
            continue
        for size, build in workload.sizes.items():
            if size in args.sizes:
                rows.append(_run(workload, size, build(args.workdir), demo_dir, args))
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['metric']:<11}{r['size']:<6}{r['n']:>4}{r['n'] / r['loop_s']:>9.2f}{r['n'] / r['batched_s']:>11.2f}"
              f"{r['loop_s'] / r['batched_s']:>7.2f}x{r['max_diff']:>10.1e}  {r['detector']}")
    return 0


def _run(workload: Workload, size: str, overrides: dict, demo_dir: Path, args: argparse.Namespace) -> dict:
    settings = Settings(profile="demo", demo_weights_dir=demo_dir, device=args.device, dtype="float32",
                        data_dir=args.workdir / "data", **overrides)
    samples = workload.samples(args.outputs)
    models = ModelRegistry()
    scorer = get_scorer(workload.metric, settings, models)
    backbone = scorer.backbone()
    backbone.batch_size = args.batch_size
    scorer.score(samples[:1])  # warm up (first-call allocations), then start cold
    workload.clear(backbone)

    start = time.perf_counter()
    looped = []
    for sample in samples:
        workload.clear(backbone)
        looped += scorer.score([sample])
    loop_s = time.perf_counter() - start

    workload.clear(backbone)
    start = time.perf_counter()
    batched = score_metrics(samples, workload.metric, settings, models, chunk_size=args.batch_size)[workload.metric]
    batched_s = time.perf_counter() - start

    diffs = [abs(a.value - b.value) for a, b in zip(looped, batched) if not (math.isnan(a.value) and math.isnan(b.value))]
    detection = getattr(backbone, "detection", None)
    return {"metric": workload.metric, "size": size, "n": len(samples), "loop_s": loop_s, "batched_s": batched_s,
            "max_diff": max(diffs) if diffs else float("nan"), "detector": detection.name if detection else "-"}


if __name__ == "__main__":
    sys.exit(main())
