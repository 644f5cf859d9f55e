"""Pictures for people: MaSC patch maps as heat maps with a colour scale, correspondence lines, mask overlays.

Reads only `PatchMaps`-shaped data (see CONVENTIONS "MaSC engine"): grids are float arrays (Hp, Wp) in
row-major patch order, covering the whole image (patch (r, c) spans rows r*H/Hp..(r+1)*H/Hp and columns
c*W/Wp..(c+1)*W/Wp of an H x W image); NaN cells are drawn transparent. Pure NumPy + Pillow; no torch.
The photos drawn on are `masc_ui.imaging.InputImage`s (their decoded pixels are used as they are) or anything
`as_input_image` reads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .imaging import InputImage, as_input_image

# Viridis anchors (matplotlib's, every 1/8): perceptually uniform and readable by colour-blind people.
_VIRIDIS = np.array(
    [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ],
    dtype=np.float32,
)
LEGEND_FONT_MIN = 13
"""Smallest legend text, in pixels; larger images get proportionally larger text (`legend_font_size`), so that a
picture shown scaled down on screen keeps a readable caption."""


def colormap(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Map `values` (any shape) linearly from [lo, hi] onto viridis; returns uint8 (..., 4) RGBA with
    alpha 0 where a value is NaN and 255 elsewhere. Values outside [lo, hi] are clamped."""
    v = np.asarray(values, dtype=np.float32)
    span = hi - lo if hi > lo else 1.0
    t = np.clip((np.nan_to_num(v, nan=lo) - lo) / span, 0.0, 1.0) * (len(_VIRIDIS) - 1)
    i = np.minimum(t.astype(np.int64), len(_VIRIDIS) - 2)
    f = (t - i)[..., None]
    rgb = _VIRIDIS[i] * (1 - f) + _VIRIDIS[i + 1] * f
    alpha = np.where(np.isnan(v), 0, 255)[..., None]
    return np.concatenate([rgb, alpha], axis=-1).round().astype(np.uint8)


def grid_to_image(grid: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Nearest-neighbour upsampling of a (Hp, Wp) grid to an image of `size` = (W, H); returns (H, W)."""
    g = np.asarray(grid, dtype=np.float32)
    if g.ndim != 2 or g.size == 0:
        raise ValueError(f"a patch grid must be a non-empty 2-D array (Hp, Wp), got shape {g.shape}")
    w, h = size
    rows = np.minimum((np.arange(h) * g.shape[0]) // h, g.shape[0] - 1)
    cols = np.minimum((np.arange(w) * g.shape[1]) // w, g.shape[1] - 1)
    return g[rows][:, cols]


def heatmap(
    image: InputImage | Image.Image, grid: np.ndarray, *, lo: float, hi: float, title: str, opacity: float = 0.6
) -> Image.Image:
    """`image` with `grid` (Hp, Wp) drawn over it in viridis at `opacity` (NaN cells leave the photo as is),
    and a legend strip below: `title` and a colour bar from `lo` to `hi`. Returns RGB,
    (W, H + `legend_height(W, title)`)."""
    base = as_input_image(image).pixels.convert("RGBA")
    rgba = colormap(grid_to_image(grid, base.size), lo, hi)
    rgba[..., 3] = (rgba[..., 3].astype(np.float32) * float(np.clip(opacity, 0.0, 1.0))).astype(np.uint8)
    blended = Image.alpha_composite(base, Image.fromarray(rgba, "RGBA")).convert("RGB")
    return with_legend(blended, title=title, lo=lo, hi=hi)


def legend_font_size(width: int) -> int:
    """Legend text size in pixels for an image `width` pixels wide: 1/32 of the width, at least
    `LEGEND_FONT_MIN`."""
    return max(LEGEND_FONT_MIN, round(width / 32))


def legend_height(width: int, title: str) -> int:
    """Height in pixels of the legend strip `with_legend` puts under an image `width` pixels wide: the title,
    wrapped to the width, then the colour bar."""
    size = legend_font_size(width)
    return _PAD + len(_wrap(title, _font(size), width - 2 * _PAD)) * _line(size) + _PAD + _line(size) + _PAD


def with_legend(image: Image.Image, *, title: str, lo: float, hi: float) -> Image.Image:
    """`image` on top of a white strip holding `title` (wrapped to the image's width, never cut) and a viridis
    colour bar labelled `lo` .. `hi`; the strip is `legend_height(W, title)` pixels high."""
    w, h = image.size
    size = legend_font_size(w)
    font = _font(size)
    lines = _wrap(title, font, w - 2 * _PAD)
    canvas = Image.new("RGB", (w, h + legend_height(w, title)), "white")
    canvas.paste(image.convert("RGB"), (0, 0))
    draw = ImageDraw.Draw(canvas)
    y = h + _PAD
    for text in lines:
        draw.text((_PAD, y), text, fill="black", font=font)
        y += _line(size)
    y += _PAD
    lo_txt, hi_txt = f"{lo:.3g}", f"{hi:.3g}"
    x0 = _PAD + int(draw.textlength(lo_txt, font=font)) + _PAD
    x1 = max(x0 + 20, w - _PAD - int(draw.textlength(hi_txt, font=font)) - _PAD)
    bar_h = max(8, size - 2)
    bar = colormap(np.linspace(lo, hi, max(x1 - x0, 1))[None, :].repeat(bar_h, 0), lo, hi)
    canvas.paste(Image.fromarray(bar[..., :3], "RGB"), (x0, y + (_line(size) - bar_h) // 2))
    draw.text((_PAD, y), lo_txt, fill="black", font=font)
    draw.text((min(x1 + _PAD, w - _PAD - int(draw.textlength(hi_txt, font=font))), y), hi_txt, fill="black", font=font)
    return canvas


_PAD = 6
"""Margin of legend text and bar, in pixels."""


def _line(size: int) -> int:
    """Line height for text of `size` pixels."""
    return round(size * 1.35)


def _wrap(text: str, font: ImageFont.ImageFont | ImageFont.FreeTypeFont, width: int) -> list[str]:
    """`text` broken at spaces into lines no wider than `width` pixels; a word wider than that is broken
    between characters."""
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength
    pieces: list[str] = []
    for word in text.split():
        piece = ""
        for ch in word:
            if piece and measure(piece + ch, font=font) > width:
                pieces.append(piece)
                piece = ""
            piece += ch
        pieces.append(piece)
    lines: list[str] = []
    for piece in pieces:
        if lines and measure(f"{lines[-1]} {piece}", font=font) <= width:
            lines[-1] = f"{lines[-1]} {piece}"
        else:
            lines.append(piece)
    return lines or [""]


def patch_center(flat_index: int, grid: tuple[int, int], size: tuple[int, int]) -> tuple[float, float]:
    """Pixel (x, y) of the centre of row-major patch `flat_index` of a (Hp, Wp) `grid` over a (W, H) image."""
    hp, wp = grid
    r, c = divmod(int(flat_index), int(wp))
    return ((c + 0.5) * size[0] / wp, (r + 0.5) * size[1] / hp)


def correspondences(
    ref: InputImage | Image.Image,
    out: InputImage | Image.Image,
    matches: Sequence[tuple[int, int, int, float]],
    *,
    ref_grid: tuple[int, int],
    out_grid: tuple[int, int],
    ref_index: int = 0,
    top_k: int = 20,
    lo: float = 0.0,
    hi: float = 1.0,
    height: int = 320,
) -> Image.Image:
    """Reference and output side by side (both scaled to `height`), with the `top_k` strongest matches of
    reference `ref_index` drawn as lines coloured by cosine (viridis over [lo, hi]) and a legend strip.

    `matches`: (ref_index, ref_patch_flat_idx, out_patch_flat_idx, cos) as in `PatchMaps.correspondences`.
    """
    ref, out = as_input_image(ref).pixels, as_input_image(out).pixels
    a = ref.resize((max(1, round(ref.width * height / ref.height)), height))
    b = out.resize((max(1, round(out.width * height / out.height)), height))
    gap = 16
    canvas = Image.new("RGB", (a.width + gap + b.width, height), "white")
    canvas.paste(a, (0, 0))
    canvas.paste(b, (a.width + gap, 0))
    draw = ImageDraw.Draw(canvas)
    chosen = sorted((m for m in matches if m[0] == ref_index), key=lambda m: -m[3])[:top_k]
    for _, ri, oi, cos in chosen:
        xa, ya = patch_center(ri, ref_grid, a.size)
        xb, yb = patch_center(oi, out_grid, b.size)
        colour = tuple(int(v) for v in colormap(np.array([cos]), lo, hi)[0, :3])
        draw.line([(xa, ya), (xb + a.width + gap, yb)], fill=colour, width=2)
        for x, y in ((xa, ya), (xb + a.width + gap, yb)):
            draw.ellipse([x - 3, y - 3, x + 3, y + 3], outline="white", fill=colour)
    title = f"top {len(chosen)} correspondences (reference {ref_index + 1} -> output), colour = cosine"
    return with_legend(canvas, title=title, lo=lo, hi=hi)


def side_by_side(images: Sequence[Image.Image], *, gap: int = 16) -> Image.Image:
    """`images` in a row on white, each scaled (keeping its aspect) to the height of the tallest, `gap` pixels
    apart; one picture of several references' maps, each keeping its own legend."""
    if not images:
        raise ValueError("side_by_side needs at least one image")
    height = max(im.height for im in images)
    scaled = [
        im if im.height == height else im.resize((max(1, round(im.width * height / im.height)), height))
        for im in images
    ]
    canvas = Image.new("RGB", (sum(im.width for im in scaled) + gap * (len(scaled) - 1), height), "white")
    x = 0
    for im in scaled:
        canvas.paste(im.convert("RGB"), (x, 0))
        x += im.width + gap
    return canvas


def mask_overlay(
    image: InputImage | Image.Image,
    mask: np.ndarray | None,
    *,
    opacity: float = 0.5,
    color: tuple[int, int, int] = (255, 40, 120),
) -> Image.Image:
    """`image` with the bool/0..1 (H, W) `mask` tinted in `color` at `opacity` and its outline drawn.
    A mask of another size is resized (nearest) to the image. None = the image unchanged (RGB)."""
    base = as_input_image(image).pixels
    if mask is None:
        return base
    m = np.asarray(mask)
    if m.shape != (base.height, base.width):
        m = np.asarray(Image.fromarray((m > 0).astype(np.uint8) * 255).resize(base.size, Image.NEAREST)) > 0
    m = m > 0.5 if m.dtype != bool else m
    arr = np.asarray(base, dtype=np.float32)
    a = float(np.clip(opacity, 0.0, 1.0))
    arr[m] = arr[m] * (1 - a) + np.array(color, dtype=np.float32) * a
    edge = m & ~(np.roll(m, 1, 0) & np.roll(m, -1, 0) & np.roll(m, 1, 1) & np.roll(m, -1, 1))
    arr[edge] = color
    return Image.fromarray(arr.round().astype(np.uint8), "RGB")


def draw_prompts(
    image: Image.Image,
    points: Sequence[tuple[float, float, int]] = (),
    box: tuple[float, float, float, float] | None = None,
    pending_corner: tuple[float, float] | None = None,
) -> Image.Image:
    """Segment Anything prompts drawn on `image`: positive points (label 1) green, negative (0) red,
    the box (x0, y0, x1, y1) and a box corner waiting for its second click, in pixel coordinates."""
    img = image.convert("RGB").copy()
    draw = ImageDraw.Draw(img)
    r = max(4, round(min(img.size) / 80))
    for x, y, label in points:
        fill = (30, 200, 60) if label == 1 else (230, 40, 40)
        draw.ellipse([x - r, y - r, x + r, y + r], fill=fill, outline="white", width=2)
    if box is not None:
        draw.rectangle(box, outline=(40, 140, 255), width=3)
    if pending_corner is not None:
        x, y = pending_corner
        draw.rectangle([x - r, y - r, x + r, y + r], outline=(40, 140, 255), width=3)
    return img


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()
