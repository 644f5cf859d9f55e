"""Write the example pairs under `assets/examples/` from photos that scikit-image ships (no network).

Each pair is a folder `<name>/` with `ref.jpg` (reference of the subject), `ref_mask.png` (its subject
mask, white = subject), `out.jpg` (a stand-in "generated" output: the masked subject mirrored, scaled and
pasted onto another scene), `out_mask.png` (where it was pasted) and `meta.json` (`prompt`, `subject`,
`title`). The masks are hand-placed ellipses, roughly covering the subject; they are examples, not ground
truth. Images are at most 512 px on their long side. Run `python scripts/make_assets.py` to rebuild them;
the output is deterministic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter
from skimage import data

ROOT = Path(__file__).resolve().parent.parent / "assets" / "examples"
Ellipse = tuple[int, int, int, int]
"""(x0, y0, x1, y1) pixel box of an ellipse, in the source photo's coordinates."""


@dataclass(frozen=True)
class Pair:
    name: str
    title: str
    subject: str
    prompt: str
    photo: str
    """Name of the `skimage.data` function giving the reference photo."""
    ellipses: tuple[Ellipse, ...]
    """Union of these ellipses = the subject mask in the reference."""
    scene: str
    """Name of the `skimage.data` grey texture used as the output's background."""
    tint: tuple[int, int, int]
    """RGB colour the grey scene texture is tinted with."""
    scale: float
    """Size of the pasted subject relative to the reference."""
    offset: tuple[int, int]
    """(x, y) of the pasted subject's top-left corner in the output."""
    out_size: tuple[int, int] = (448, 384)
    """(W, H) of the output image."""


PAIRS = (
    Pair(
        "cat-on-grass",
        "Cat on the grass",
        "cat",
        "a photo of a cat lying on the grass in a sunny garden",
        "chelsea",
        ((-10, 0, 400, 330),),
        "grass",
        (110, 170, 80),
        0.8,
        (70, 90),
    ),
    Pair(
        "coffee-on-bricks",
        "Coffee cup on a brick wall",
        "coffee cup",
        "a coffee cup on a saucer standing in front of a red brick wall",
        "coffee",
        ((75, 80, 480, 392), (170, 15, 410, 290)),
        "brick",
        (190, 90, 70),
        0.7,
        (60, 80),
    ),
)


def mask_of(size: tuple[int, int], ellipses: tuple[Ellipse, ...]) -> Image.Image:
    """'L' mask, 255 inside the union of the ellipses."""
    mask = Image.new("L", size, 0)
    draw = ImageDraw.Draw(mask)
    for box in ellipses:
        draw.ellipse(box, fill=255)
    return mask


def scene_of(name: str, tint: tuple[int, int, int], size: tuple[int, int]) -> Image.Image:
    grey = np.asarray(Image.fromarray(getattr(data, name)()).resize(size, Image.BICUBIC), dtype=np.float32) / 255.0
    rgb = np.stack([grey * (0.5 + c / 255.0) * 180 for c in tint], axis=-1)
    return Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8), "RGB")


def fit(img: Image.Image, long_side: int = 512) -> Image.Image:
    scale = min(1.0, long_side / max(img.size))
    return img if scale == 1.0 else img.resize((round(img.width * scale), round(img.height * scale)), Image.LANCZOS)


def build(pair: Pair, root: Path) -> Path:
    folder = root / pair.name
    folder.mkdir(parents=True, exist_ok=True)
    ref = Image.fromarray(getattr(data, pair.photo)()).convert("RGB")
    ref_mask = mask_of(ref.size, pair.ellipses)
    ref, ref_mask = fit(ref), fit(ref_mask)

    size = (round(ref.width * pair.scale), round(ref.height * pair.scale))
    subject = ref.transpose(Image.FLIP_LEFT_RIGHT).resize(size, Image.LANCZOS)
    subject_mask = ref_mask.transpose(Image.FLIP_LEFT_RIGHT).resize(size, Image.LANCZOS)
    out = scene_of(pair.scene, pair.tint, pair.out_size)
    out_mask = Image.new("L", pair.out_size, 0)
    out.paste(subject, pair.offset, subject_mask.filter(ImageFilter.GaussianBlur(2)))
    out_mask.paste(subject_mask, pair.offset)

    ref.save(folder / "ref.jpg", quality=88)
    out.save(folder / "out.jpg", quality=88)
    ref_mask.point(lambda v: 255 if v >= 128 else 0).save(folder / "ref_mask.png", optimize=True)
    out_mask.point(lambda v: 255 if v >= 128 else 0).save(folder / "out_mask.png", optimize=True)
    meta = {
        "title": pair.title,
        "subject": pair.subject,
        "prompt": pair.prompt,
        "source": f"skimage.data.{pair.photo}() on skimage.data.{pair.scene}() (scikit-image sample data)",
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return folder


def main() -> None:
    for pair in PAIRS:
        print(build(pair, ROOT))


if __name__ == "__main__":
    main()
