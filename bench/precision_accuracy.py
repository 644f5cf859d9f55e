"""What bfloat16 costs in accuracy: every registered metric scored in float32 and in bfloat16 on the DreamBooth
photos, and the largest / mean |difference| printed as the README's Markdown table. Deterministic (seeded random
checkpoints, fixed masks), not a timing.

    python bench/precision_accuracy.py                       # demo checkpoints + base-size random ones
    python bench/precision_accuracy.py --sets demo           # only the tiny demo checkpoints (seconds)

Samples: for each DreamBooth subject in `../shared/data/dreambooth/dataset`, the first photo is the reference and
every other photo of the subject an "output", with the k-th prompt template of its class (DreamBooth's
`prompts_and_classes.txt`, unique token `sks`, the subject `sks <class>` stripped for PF). The photos carry no
masks, so both images get the same centred ellipse (half the width and height): the comparison is float32 vs
bfloat16 on identical inputs, not a judgement of the photos.

Checkpoint sets (random weights: the differences say what rounding does to these architectures, not what a metric
means):
- `demo`: the tiny demo checkpoints of `masc-ui demo-weights` (hidden 32, 2 layers);
- `base`: base-size random checkpoints built by `bench/workloads.py`: SigLIP2 NaFlex (hidden 768, 12 layers),
  CLIP-B/32, a PickScore-shaped CLIP at base width (patch 14, GELU, scale 100), DINO ViT-S/16.
MaSC runs at the default patch budget (1024).
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from masc_ui.datasets.dreambooth import PROMPTS_FILE, read_prompts_and_classes  # noqa: E402
from masc_ui.imaging import load_image  # noqa: E402
from masc_ui.metrics.registry import list_metrics, score_metrics  # noqa: E402
from masc_ui.metrics.sample import Sample  # noqa: E402
from masc_ui.models.registry import ModelRegistry  # noqa: E402
from masc_ui.settings import Settings  # noqa: E402
from workloads import clip_checkpoint, dino_checkpoint, naflex_checkpoint  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "dreambooth" / "dataset"
UNIQUE_TOKEN = "sks"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="DreamBooth `dataset` folder")
    parser.add_argument("--sets", nargs="+", choices=("demo", "base"), default=["demo", "base"])
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "masc-bench",
                        help="where the checkpoints are built (and reused)")
    parser.add_argument("--metrics", help="comma-separated metric names (default: every registered metric)")
    args = parser.parse_args(argv)
    if not (args.data / PROMPTS_FILE).is_file():
        print(f"no DreamBooth dataset at {args.data} (expected {PROMPTS_FILE} there); pass --data", file=sys.stderr)
        return 2
    samples = dreambooth_samples(args.data)
    names = args.metrics.split(",") if args.metrics else [spec.name for spec in list_metrics()]
    print(f"{len(samples)} samples from {args.data}; metrics {', '.join(names)}\n")
    rows = []
    for which in args.sets:
        base = checkpoint_settings(which, args.workdir)
        values = {dtype: score_metrics(samples, names, base.replace(dtype=dtype), ModelRegistry())
                  for dtype in ("float32", "bfloat16")}
        for name in names:
            rows.append((name, which, *differences(values["float32"][name], values["bfloat16"][name])))
    print("| metric | checkpoints | samples | max abs diff | mean abs diff | float32 range seen |")
    print("|---|---|---|---|---|---|")
    for name, which, n, worst, mean, lo, hi, note in rows:
        print(f"| {name} | {which} | {n} | {worst:.1e} | {mean:.1e} | {lo:.3f} .. {hi:.3f} |{note}")
    return 0


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
            samples.append(Sample(refs=(ref,), out=out, prompt=templates[k % len(templates)].format(UNIQUE_TOKEN, cls),
                                  subject=f"{UNIQUE_TOKEN} {cls}", ref_masks=(centred_ellipse(ref.size),),
                                  out_mask=centred_ellipse(out.size)))
    return samples


def centred_ellipse(size: tuple[int, int]) -> np.ndarray:
    """bool (H, W): the ellipse centred in an image of `size` (W, H) with half its width and height as axes."""
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w]
    return (((yy - h / 2) / (h / 4)) ** 2 + ((xx - w / 2) / (w / 4)) ** 2) <= 1


def checkpoint_settings(which: str, workdir: Path) -> Settings:
    """Settings of the demo checkpoints (written under `workdir` if missing) or of the base-size random ones."""
    if which == "demo":
        from masc_ui.models.demo import write_demo_weights

        weights = workdir / "demo-weights"
        write_demo_weights(weights)
        return Settings(profile="demo", demo_weights_dir=weights, device="cpu")
    pickscore = str(clip_checkpoint(workdir, "pickscore"))
    return Settings(profile="demo", demo_weights_dir=workdir / "demo-weights", device="cpu",
                    siglip_model=str(naflex_checkpoint(workdir, "base")),
                    clip_model=str(clip_checkpoint(workdir, "clip")),
                    pickscore_model=pickscore, pickscore_processor=pickscore, dino_model=str(dino_checkpoint(workdir)))


def differences(exact: list, fast: list) -> tuple[int, float, float, float, float, str]:
    """(n, max |d|, mean |d|, min, max of the float32 values, note) over the samples both scored."""
    pairs = [(a.value, b.value) for a, b in zip(exact, fast) if not (math.isnan(a.value) or math.isnan(b.value))]
    nan_mismatch = sum(math.isnan(a.value) != math.isnan(b.value) for a, b in zip(exact, fast))
    note = f" {nan_mismatch} NaN in one precision only" if nan_mismatch else ""
    if not pairs:
        return 0, math.nan, math.nan, math.nan, math.nan, note or " not computed"
    diffs = np.abs(np.array([a - b for a, b in pairs]))
    seen = [a for a, _ in pairs]
    return len(pairs), float(diffs.max()), float(diffs.mean()), min(seen), max(seen), note


if __name__ == "__main__":
    sys.exit(main())
