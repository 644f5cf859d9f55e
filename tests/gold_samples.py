"""Stored samples for the gold-task tests: outputs that differ (the example output turned by 0, 90, 180, 270 degrees
and mirrored), one prompt for all, so that a gold task and a normal one differ only by their images."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageOps

from masc_ui.workbench import Workbench
from masc_ui.workbench.examples import EXAMPLES_DIR

PROMPT = "the cat sitting outdoors"


def outputs(folder: Path, n: int, name: str = "cat-on-grass") -> list[Path]:
    """`n` distinct output images (PNG files in `folder`) made from the example `name`'s output."""
    folder.mkdir(parents=True, exist_ok=True)
    base = Image.open(EXAMPLES_DIR / name / "out.jpg").convert("RGB")
    paths = []
    for i in range(n):
        image = base.rotate(90 * (i % 4))
        if i // 4 % 2:
            image = ImageOps.mirror(image)
        if i >= 8:
            image = ImageOps.posterize(image, 1 + i % 7)
        paths.append(folder / f"{name}-{i}.png")
        image.save(paths[-1])
    return paths


def save_samples(
    wb: Workbench, folder: Path, n: int, *, dataset: str = "d", methods: tuple[str, ...] = ("m1", "m2")
) -> list[int]:
    """`n` stored samples of one subject in `dataset` (marked for rating), method by turns; their ids."""
    ids = []
    for i, out in enumerate(outputs(folder, n)):
        sample = wb.scoring.make_sample([EXAMPLES_DIR / "cat-on-grass" / "ref.jpg"], out, PROMPT, "cat")
        saved = wb.recorder.save(sample, {}, user=None, dataset=dataset, method=methods[i % len(methods)])
        ids.append(saved.sample_id)
    wb.samples.set_for_rating(dataset, True, user=None)
    return ids
