"""What bfloat16 costs in accuracy: every registered metric (image and video) scored in float32 and in bfloat16, and
the largest / mean |difference| printed as the README's Markdown table. Deterministic (seeded random checkpoints,
fixed masks), not a timing.

    python bench/precision_accuracy.py                       # demo checkpoints + base-size random ones
    python bench/precision_accuracy.py --sets demo           # only the tiny demo checkpoints (a minute or two)

Image samples: for each DreamBooth subject in `../shared/data/dreambooth/dataset`, the first photo is the reference
and every other photo of the subject an "output", with the k-th prompt template of its class (DreamBooth's
`prompts_and_classes.txt`, unique token `sks`, the subject `sks <class>` stripped for PF); the DreamBooth photos hold
no face, so the face metrics are scored on a second set: views of the astronaut photo that ships with scikit-image
(`workloads.face_photos()`: the first is the reference, the others outputs, prompt "a photo of an astronaut ...").
Every metric is compared on the samples it scores in both precisions (the face metrics are NaN, "no face found", on
the DreamBooth photos). The photos carry no masks, so both images get the same centred ellipse (half the width and
height): the comparison is float32 vs bfloat16 on identical inputs, not a judgement of the photos.
Video samples (GmeScore, NexusScore with its default thresholds): one clip per DreamBooth subject whose frames are
the subject's photos (128 x 96, H.264), its first photo as the reference, its class as NexusScore's label.

Checkpoint sets (random weights: the differences say what rounding does to these architectures, not what a metric
means):
- `demo`: the tiny demo checkpoints of `masc-ui demo-weights` (VQAScore in both families: CLIP-FlanT5, the demo
  profile's, and the Qwen2.5-VL-style chat VLM);
- `base`: base-size random checkpoints built by `bench/workloads.py`: SigLIP2 NaFlex (hidden 768, 12 layers),
  CLIP-B/32, a PickScore-shaped CLIP at base width (patch 14, GELU, scale 100), DINO ViT-S/16, a Qwen2.5-VL-style chat
  VLM (Qwen2-0.5B-sized LM with the full vocabulary, 8-layer ViT; VQAScore's chat family), BLIP-2 ITM (ViT-B/14,
  BERT-base Q-Former), IR-101 (FaceSim's real architecture), FaceScore's BLIP (BERT-base text encoder, ViT-B/16),
  ResNet-50 (ArtScore's real architecture). Not in `base`: CLIP-FlanT5 and the video models (GME-Qwen2-VL, OWLv2),
  measured only on their demo checkpoints.
MaSC runs at the default patch budget (1024). The "max rel diff" column is max |d| / |float32 value| (for a
probability, about |d ln p|).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads import catalogue_base_settings, clip_checkpoint, dino_checkpoint, face_photos, naflex_checkpoint  # noqa: E402

from masc_ui.datasets.dreambooth import PROMPTS_FILE, read_prompts_and_classes  # noqa: E402
from masc_ui.imaging import load_image, open_video  # noqa: E402
from masc_ui.metrics.registry import get_spec, list_metrics, score_metrics, score_video_metrics  # noqa: E402
from masc_ui.metrics.sample import Sample  # noqa: E402
from masc_ui.metrics.video.sample import VideoSample  # noqa: E402
from masc_ui.models.loaded_models import ModelRegistry  # noqa: E402
from masc_ui.settings import Settings  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "dreambooth" / "dataset"
UNIQUE_TOKEN = "sks"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="DreamBooth `dataset` folder")
    parser.add_argument("--sets", nargs="+", choices=("demo", "base"), default=["demo", "base"])
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "masc-bench",
        help="where the checkpoints are built (and reused)",
    )
    parser.add_argument("--metrics", help="comma-separated metric names (default: every registered metric)")
    args = parser.parse_args(argv)
    if not (args.data / PROMPTS_FILE).is_file():
        print(f"no DreamBooth dataset at {args.data} (expected {PROMPTS_FILE} there); pass --data", file=sys.stderr)
        return 2
    samples = dreambooth_samples(args.data) + face_samples()
    videos = dreambooth_videos(args.data)
    names = (
        args.metrics.split(",") if args.metrics else [s.name for s in list_metrics(None) if s.name != "naturalscore"]
    )
    print(
        f"{len(samples)} image samples, {len(videos)} videos from {args.data}; metrics {', '.join(names)} "
        "(naturalscore asks a remote judge: no local model, no precision)\n"
    )
    rows = []
    for which in args.sets:
        base = checkpoint_settings(which, args.workdir)
        for label, name, overrides in cases(names, which, base):
            settings = base.replace(**overrides)
            values = {dtype: score(name, samples, videos, settings.replace(dtype=dtype)) for dtype in DTYPES}
            rows.append((label, which, *differences(values["float32"], values["bfloat16"])))
    print("| metric | checkpoints | samples | max abs diff | mean abs diff | max rel diff | float32 values seen |")
    print("|---|---|---|---|---|---|---|")
    for label, which, n, worst, mean, rel, lo, hi, note in rows:
        print(f"| {label} | {which} | {n} | {worst:.1e} | {mean:.1e} | {rel:.1e} | {lo:.3g} .. {hi:.3g} |{note}")
    return 0


DTYPES = ("float32", "bfloat16")


def cases(names: list[str], which: str, settings: Settings) -> list[tuple[str, str, dict]]:
    """(row label, metric, settings overrides) per row: VQAScore once per family the set has."""
    out = []
    for name in names:
        if name != "vqascore":
            out.append((name, name, {}))
        elif which == "demo":
            chat = str(settings.resolved_demo_weights_dir / "qwen2.5-vl")
            out += [("vqascore (CLIP-FlanT5)", name, {}), ("vqascore (chat VLM)", name, {"vqa_model": chat})]
        else:
            out.append(("vqascore (chat VLM)", name, {}))
    return out


def score(name: str, samples: list[Sample], videos: list[VideoSample], settings: Settings) -> list:
    """`name`'s values on the image samples, or on the videos for a video metric (fresh models each time)."""
    if get_spec(name).media == "video":
        return score_video_metrics(videos, name, settings, ModelRegistry())[name]
    return score_metrics(samples, name, settings, ModelRegistry())[name]


def dreambooth_samples(root: Path) -> list[Sample]:
    """Reference = each subject's first photo; outputs = its other photos with the class's prompt templates."""
    prompts = read_prompts_and_classes(root / PROMPTS_FILE)
    samples = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        photos = sorted(folder.glob("*.jpg"))
        if len(photos) < 2:
            continue
        cls = prompts.classes.get(folder.name, folder.name)
        templates = prompts.prompts_for(folder.name)
        ref = load_image(photos[0], name=str(photos[0]))
        for k, path in enumerate(photos[1:]):
            out = load_image(path, name=str(path))
            samples.append(
                Sample(
                    refs=(ref,),
                    out=out,
                    prompt=templates[k % len(templates)].format(UNIQUE_TOKEN, cls),
                    subject=f"{UNIQUE_TOKEN} {cls}",
                    ref_masks=(centred_ellipse(ref.size),),
                    out_mask=centred_ellipse(out.size),
                )
            )
    return samples


def face_samples() -> list[Sample]:
    """Reference = the first of `workloads.face_photos()`, outputs = the others (each holds one face)."""
    ref, *outs = face_photos()
    return [
        Sample(
            refs=(ref,),
            out=out,
            prompt=f"a photo of an astronaut in a white space suit, view {k}",
            subject="astronaut",
            ref_masks=(centred_ellipse(ref.size),),
            out_mask=centred_ellipse(out.size),
        )
        for k, out in enumerate(outs)
    ]


def dreambooth_videos(root: Path, size: tuple[int, int] = (128, 96)) -> list[VideoSample]:
    """One H.264 clip per subject: its photos (resized to `size`) as frames; its first photo as the reference."""
    from tests.video_files import encode_video

    prompts = read_prompts_and_classes(root / PROMPTS_FILE)
    videos = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        photos = sorted(folder.glob("*.jpg"))
        if len(photos) < 2:
            continue
        cls = prompts.classes.get(folder.name, folder.name)
        frames = [load_image(path, name=str(path)).resize(size) for path in photos]
        videos.append(
            VideoSample(
                video=open_video(encode_video(frames, "mp4"), name=f"{folder.name}.mp4"),
                refs=(load_image(photos[0], name=str(photos[0])),),
                prompt=prompts.prompts_for(folder.name)[0].format(UNIQUE_TOKEN, cls),
                class_labels=(cls,),
            )
        )
    return videos


def centred_ellipse(size: tuple[int, int]) -> np.ndarray:
    """bool (H, W): the ellipse centred in an image of `size` (W, H) with half its width and height as axes."""
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w]
    return (((yy - h / 2) / (h / 4)) ** 2 + ((xx - w / 2) / (w / 4)) ** 2) <= 1


def checkpoint_settings(which: str, workdir: Path) -> Settings:
    """Settings of the demo checkpoints (written under `workdir` if missing) or of the base-size random ones."""
    from masc_ui.models.demo import write_demo_weights

    weights = workdir / "demo-weights"
    write_demo_weights(weights)
    demo = Settings(profile="demo", demo_weights_dir=weights, device="cpu", data_dir=workdir / "data")
    if which == "demo":
        return demo
    pickscore = str(clip_checkpoint(workdir, "pickscore"))
    return demo.replace(
        siglip_model=str(naflex_checkpoint(workdir, "base")),
        clip_model=str(clip_checkpoint(workdir, "clip")),
        pickscore_model=pickscore,
        pickscore_processor=pickscore,
        dino_model=str(dino_checkpoint(workdir)),
        **catalogue_base_settings(workdir),
    )


def differences(exact: list, fast: list) -> tuple[int, float, float, float, float, float, str]:
    """(n, max |d|, mean |d|, max |d| / |float32 value|, min, max of the float32 values, note) over the samples both
    scored."""
    pairs = [(a.value, b.value) for a, b in zip(exact, fast) if not (math.isnan(a.value) or math.isnan(b.value))]
    nan_mismatch = sum(math.isnan(a.value) != math.isnan(b.value) for a, b in zip(exact, fast))
    note = f" {nan_mismatch} NaN in one precision only" if nan_mismatch else ""
    if not pairs:
        return 0, math.nan, math.nan, math.nan, math.nan, math.nan, note or " not computed"
    seen = np.array([a for a, _ in pairs])
    diffs = np.abs(seen - np.array([b for _, b in pairs]))
    relative = diffs / np.maximum(np.abs(seen), np.finfo(np.float64).tiny)
    return (
        len(pairs),
        float(diffs.max()),
        float(diffs.mean()),
        float(relative.max()),
        float(seen.min()),
        float(seen.max()),
        note,
    )


if __name__ == "__main__":
    sys.exit(main())
