"""Scorer-catalogue throughput: our batched `score_metrics` vs a per-sample loop over the same scorer, in one run.

The per-sample loop is how the reference repositories score (t2v_metrics' and OpenS2V's evaluation scripts,
FaceScore's `get_reward`, ArtScore's script with batch 1): one sample per call, everything recomputed for it (its
reference's face detection and embedding included) — here `scorer.score([sample])` with the scorer's caches emptied
before each sample, so both sides run the same model and preprocessing and must give the same numbers (checked: the
largest |difference| is printed). Batched: `score_metrics` over all samples in chunks of --batch-size, the model
batch size set to the same (each distinct image detected and encoded once). Models are loaded and warmed up before
timing; each side starts from empty caches; the best of --repeats alternating runs counts (a shared machine's load
comes and goes; the best run is the least disturbed).

`WORKLOADS` is the one list of (metric, checkpoint size) rows: `demo` = the tiny demo checkpoint (what the demo
profile runs), `base` = a seeded random checkpoint of the released architecture or a base-size one, built once in
--workdir by `bench/workloads.py` (Qwen2.5-VL-style chat VLM with a Qwen2-0.5B-sized LM, BLIP-2 ITM ViT-B/14 +
BERT-base Q-Former, IR-101, FaceScore BLIP ViT-B/16 + BERT-base (also ImageReward's base row: the same network),
ResNet-50, an OpenCLIP ViT-B/16 for HPSv2.1, DINO ViT-S/16, DINOv2-base, the DreamSim ensemble of three ViT-B/16).
Samples: VQAScore/ITMScore/ImageReward/HPSv2.1: distinct 512 x 512 outputs, each with its own prompt (no image
shared: the batching gain alone); FaceSim, FaceSim-Arc: views of the astronaut photo of scikit-image, two references
each shared by half the outputs; FaceScore, ArtScore, aesthetic: those views as outputs; DINO-I-Seg, DINOv2-I(-Seg),
DreamSim(-Seg): distinct masked 512 x 512 outputs against two masked references, each shared by half of them. Face
metrics use the packaged MTCNN detector (no SCRFD / RetinaFace weights here).

    python bench/catalogue_throughput.py                                       # every workload
    python bench/catalogue_throughput.py --only facesim-base --repeats 1
    python bench/catalogue_throughput.py --sizes demo --samples 8 --repeats 1  # a quick check

Not a test: numbers depend on the machine and its load; the ratio measured side by side is what to read.
Goal: batched >= 3x the per-sample loop at batch 8 on CPU.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import ImageOps

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads import (  # noqa: E402
    PROMPTS,
    SUBJECTS,
    artscore_checkpoint,
    blip2_itm_checkpoint,
    dino_checkpoint,
    dinov2_checkpoint,
    dreamsim_checkpoint,
    face_photos,
    facescore_checkpoint,
    hps_checkpoint,
    ir101_checkpoint,
    qwen_vl_checkpoint,
    random_ellipse,
    random_image,
)

from masc_ui.imaging import as_input_image  # noqa: E402
from masc_ui.metrics.registry import get_scorer, score_metrics  # noqa: E402
from masc_ui.metrics.sample import Sample  # noqa: E402
from masc_ui.models.demo import write_demo_weights  # noqa: E402
from masc_ui.models.loaded_models import ModelRegistry  # noqa: E402
from masc_ui.settings import Settings  # noqa: E402

BATCH = 8
SAME = 1e-5
"""Largest |loop - batched| taken as the same number (batched and one-at-a-time forwards round differently)."""


@dataclass(frozen=True)
class Workload:
    """One row: `metric` with the checkpoint that `overrides(workdir, demo_dir)` names (Settings overrides) on the
    samples `samples(n)` makes."""

    name: str
    metric: str
    size: str
    overrides: Callable[[Path, Path], dict[str, Any]]
    samples: Callable[[int], list[Sample]]


def prompted_outputs(n: int) -> list[Sample]:
    """`n` distinct 512 x 512 outputs, each with its own prompt, decoded and hashed once (`InputImage`)."""
    rng = np.random.default_rng(n)
    return [
        Sample(
            refs=(),
            out=as_input_image(random_image(rng, (512, 512))),
            prompt=PROMPTS[i % len(PROMPTS)].format(SUBJECTS[i % len(SUBJECTS)]),
        )
        for i in range(n)
    ]


def face_pairs(n: int) -> list[Sample]:
    """`n` outputs (views of the astronaut, mirrored for the second half) against two references, each reference
    shared by half of them (as a benchmark's subject has several outputs)."""
    views = [as_input_image(v) for v in face_photos()]
    mirrored = [as_input_image(ImageOps.mirror(v.pixels)) for v in views]
    half = (n + 1) // 2
    return [Sample(refs=(views[0],), out=views[1 + i % (len(views) - 1)]) for i in range(half)] + [
        Sample(refs=(mirrored[0],), out=mirrored[1 + i % (len(views) - 1)]) for i in range(n - half)
    ]


def face_outputs(n: int) -> list[Sample]:
    """`n` outputs: the astronaut views and their mirror images, in turn."""
    views = [as_input_image(v) for v in face_photos()]
    views += [as_input_image(ImageOps.mirror(v.pixels)) for v in views]
    return [Sample(refs=(), out=views[i % len(views)]) for i in range(n)]


def subject_pairs(n: int) -> list[Sample]:
    """`n` distinct 512 x 512 outputs with an ellipse mask, against two 512 x 384 references (masked too), each
    shared by half of them: what the embedding metrics and their -Seg variants compare."""
    rng = np.random.default_rng(n)
    refs = [as_input_image(random_image(rng, (512, 384))) for _ in range(2)]
    ref_masks = [random_ellipse((512, 384), rng) for _ in refs]
    half = (n + 1) // 2
    return [
        Sample(
            refs=(refs[i >= half],),
            ref_masks=(ref_masks[i >= half],),
            out=as_input_image(random_image(rng, (512, 512))),
            out_mask=random_ellipse((512, 512), rng),
        )
        for i in range(n)
    ]


def embedding_workloads() -> list[Workload]:
    """DINO-I-Seg, DINOv2-I(-Seg), DreamSim(-Seg) on the demo checkpoints and on base-size random ones."""
    base = {
        "dino_i_seg": lambda w, d: {"dino_model": str(dino_checkpoint(w))},
        "dinov2_i": lambda w, d: {"dinov2_model": str(dinov2_checkpoint(w))},
        "dinov2_i_seg": lambda w, d: {"dinov2_model": str(dinov2_checkpoint(w))},
        "dreamsim": lambda w, d: {"dreamsim_weights": str(dreamsim_checkpoint(w))},
        "dreamsim_seg": lambda w, d: {"dreamsim_weights": str(dreamsim_checkpoint(w))},
    }
    rows = []
    for metric, overrides in base.items():
        name = metric.replace("_", "-")
        rows.append(Workload(f"{name}-demo", metric, "demo", lambda w, d: {}, subject_pairs))
        rows.append(Workload(f"{name}-base", metric, "base", overrides, subject_pairs))
    return rows


WORKLOADS: list[Workload] = [
    Workload(
        "vqascore-chat-demo", "vqascore", "demo", lambda w, d: {"vqa_model": str(d / "qwen2.5-vl")}, prompted_outputs
    ),
    Workload(
        "vqascore-chat-base",
        "vqascore",
        "base",
        lambda w, d: {"vqa_model": str(qwen_vl_checkpoint(w))},
        prompted_outputs,
    ),
    Workload("itmscore-demo", "itmscore", "demo", lambda w, d: {}, prompted_outputs),
    Workload(
        "itmscore-base", "itmscore", "base", lambda w, d: {"itm_model": str(blip2_itm_checkpoint(w))}, prompted_outputs
    ),
    Workload("facesim-demo", "facesim", "demo", lambda w, d: {}, face_pairs),
    Workload("facesim-base", "facesim", "base", lambda w, d: {"face_recognizer": str(ir101_checkpoint(w))}, face_pairs),
    Workload("facescore-demo", "facescore", "demo", lambda w, d: {}, face_outputs),
    Workload(
        "facescore-base",
        "facescore",
        "base",
        lambda w, d: {"facescore_model": str(facescore_checkpoint(w))},
        face_outputs,
    ),
    Workload("artscore-demo", "artscore", "demo", lambda w, d: {}, face_outputs),
    Workload(
        "artscore-base",
        "artscore",
        "base",
        lambda w, d: {"artscore_checkpoint": str(artscore_checkpoint(w))},
        face_outputs,
    ),
    Workload("imagereward-demo", "imagereward", "demo", lambda w, d: {}, prompted_outputs),
    Workload(
        "imagereward-base",
        "imagereward",
        "base",
        lambda w, d: {"imagereward_model": str(facescore_checkpoint(w) / "FS_model.pt")},
        prompted_outputs,
    ),
    Workload("hpsv21-demo", "hpsv21", "demo", lambda w, d: {}, prompted_outputs),
    Workload("hpsv21-base", "hpsv21", "base", lambda w, d: {"hps_model": str(hps_checkpoint(w))}, prompted_outputs),
    Workload("aesthetic-demo", "aesthetic", "demo", lambda w, d: {}, face_outputs),
    Workload("facesim_arc-demo", "facesim_arc", "demo", lambda w, d: {}, face_pairs),
    *embedding_workloads(),
]


def clear_caches(backbone: Any) -> None:
    """Empty every cache of a scorer's backbone (image encodings, results, face detections), so that the next call
    recomputes everything."""
    if hasattr(backbone, "clear_caches"):
        backbone.clear_caches()
    for name in ("cache", "embedding_cache"):
        if hasattr(backbone, name):
            getattr(backbone, name).clear()
    detection = getattr(backbone, "detection", None)
    if detection is not None:
        detection.cache.clear()


def run(workload: Workload, settings: Settings, n: int, batch: int, repeats: int) -> dict[str, Any]:
    """Loop and batched seconds (best of `repeats` alternating runs), the largest |difference| and the detector."""
    models = ModelRegistry()
    scorer = get_scorer(workload.metric, settings, models)
    samples = workload.samples(n)
    backbone = scorer.backbone()
    backbone.batch_size = batch
    scorer.score(samples[:1])  # untimed: first-call allocations
    loop_s = batch_s = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        looped = []
        for sample in samples:
            clear_caches(backbone)
            looped += scorer.score([sample])
        loop_s = min(loop_s, time.perf_counter() - start)
        clear_caches(backbone)
        start = time.perf_counter()
        batched = score_metrics(samples, workload.metric, settings, models, chunk_size=batch)[workload.metric]
        batch_s = min(batch_s, time.perf_counter() - start)
    pairs = [(a.value, b.value) for a, b in zip(looped, batched) if not (math.isnan(a.value) and math.isnan(b.value))]
    detection = getattr(backbone, "detection", None)
    return {
        "loop_s": loop_s,
        "batch_s": batch_s,
        "n": len(samples),
        "max_diff": max((abs(a - b) for a, b in pairs), default=math.nan),
        "detector": detection.name if detection is not None else "-",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2 * BATCH, help="samples per workload (default 16)")
    parser.add_argument("--batch-size", type=int, default=BATCH, help="model batch and score_metrics chunk (8)")
    parser.add_argument(
        "--only", action="append", choices=[w.name for w in WORKLOADS], help="run only this workload (repeatable)"
    )
    parser.add_argument("--sizes", nargs="+", choices=("demo", "base"), default=["demo", "base"])
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per side; the best counts")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--dtype",
        default="float32",
        choices=("float32", "bfloat16", "auto"),
        help="the precision policy's dtype (default float32, the exact mode)",
    )
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "masc-bench",
        help="where the checkpoints are built (and reused)",
    )
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    demo = args.workdir / "demo-weights"
    write_demo_weights(demo)
    chosen = [w for w in WORKLOADS if (not args.only or w.name in args.only) and w.size in args.sizes]
    print(
        f"scorer catalogue throughput: {args.samples} samples per workload, batch {args.batch_size}, device "
        f"{args.device}, {args.dtype}, torch {torch.__version__}, {torch.get_num_threads()} threads, best of "
        f"{args.repeats}\n"
    )
    header = (
        f"{'workload':<21}{'n':>4}{'loop s':>9}{'batched s':>11}{'loop /s':>9}{'batched /s':>12}{'ratio':>8}"
        f"{'max |d|':>10}  detector"
    )
    print(header)
    print("-" * len(header))
    for workload in chosen:
        settings = Settings(
            profile="demo",
            demo_weights_dir=demo,
            device=args.device,
            dtype=args.dtype,
            data_dir=args.workdir / "data",
            **workload.overrides(args.workdir, demo),
        )
        r = run(workload, settings, args.samples, args.batch_size, args.repeats)
        print(
            f"{workload.name:<21}{r['n']:>4}{r['loop_s']:>9.2f}{r['batch_s']:>11.2f}{r['n'] / r['loop_s']:>9.2f}"
            f"{r['n'] / r['batch_s']:>12.2f}{r['loop_s'] / r['batch_s']:>7.2f}x{r['max_diff']:>10.1e}  "
            f"{r['detector']}",
            flush=True,
        )
        if not r["max_diff"] <= SAME:
            print(f"    the two sides differ (by more than {SAME:g}, or NaN on one side only): a bug to look into")
    print("\ngoal: batched >= 3x the per-sample loop at batch 8 on CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
