"""The "-Seg" rule shared by CLIP-I-Seg, DINO-I-Seg, DINOv2-I-Seg and DreamSim-Seg (the KnowCusBench/MoKus idea;
their exact recipe is unpublished, this one is ours). One rule, one function (`segment_subject`), one scorer base.

The output is segmented by its mask and compared with the reference(s) by the base metric:

1. The mask (any size; validated by `as_mask_array`, so bool / 0..255 / 0..1) is resized to the image size
   with PIL's bilinear filter on float values when the sizes differ; foreground = value >= 0.5.
2. Every pixel with mask < 0.5 is replaced by the fill colour (default white).
3. The image is cropped to the foreground's bounding box [x0, x1) x [y0, y1) plus a margin on each side of
   `round_half_up(margin * box width)` pixels left and right and `round_half_up(margin * box height)` pixels
   top and bottom (default margin 0.05), clipped to the image. The margin is fill colour.
4. The base metric of (segmented output, references); with `segment_reference=True` each reference is segmented
   by its own mask the same way first.

NaN with a reason when the output mask (or, with `segment_reference`, a reference mask) has no pixel >= 0.5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from PIL import Image, ImageColor

from ..errors import InputError
from ..imaging import InputImage, as_input_image, as_mask_array
from .backbone_scorer import Computed, ReferenceScorer
from .base import Needs
from .sample import Sample

DEFAULT_FILL = (255, 255, 255)
DEFAULT_MARGIN = 0.05
SEG_PARAMS: dict[str, Any] = {"fill": DEFAULT_FILL, "margin": DEFAULT_MARGIN, "segment_reference": False}
"""The parameters of every -Seg metric and their defaults."""

Box = tuple[int, int, int, int]
"""(x0, y0, x1, y1) pixels, x1/y1 exclusive."""


def segment_subject(
    image: InputImage | Image.Image,
    mask: Any,
    *,
    fill: tuple[int, int, int] = DEFAULT_FILL,
    margin: float = DEFAULT_MARGIN,
    name: str = "mask",
) -> tuple[Image.Image, Box] | None:
    """`image` (an `InputImage`, or what `as_input_image` reads) with pixels outside `mask` set to `fill`,
    cropped to the mask's box plus `margin` (see the module docstring); returns (crop as RGB PIL, box in
    `image` pixels), or None when the mask is empty."""
    rgb = as_input_image(image).pixels
    fg = foreground(mask, rgb.size, name=name)
    if not fg.any():
        return None
    pixels = np.array(rgb, dtype=np.uint8)
    pixels[~fg] = np.asarray(fill, dtype=np.uint8)
    box = margin_box(fg, margin)
    x0, y0, x1, y1 = box
    return Image.fromarray(pixels[y0:y1, x0:x1], mode="RGB"), box


def foreground(mask: Any, size: tuple[int, int], *, name: str = "mask") -> np.ndarray:
    """Bool (H, W) foreground (>= 0.5) of `mask` at image `size` = (W, H), resized bilinearly if needed."""
    values = as_mask_array(mask, name=name)
    width, height = size
    if values.shape != (height, width):
        values = np.asarray(Image.fromarray(values, mode="F").resize((width, height), Image.Resampling.BILINEAR))
    return values >= 0.5


def margin_box(fg: np.ndarray, margin: float) -> Box:
    """Bounding box of the True pixels of `fg` (H, W), grown by `margin` of its width/height per side."""
    ys, xs = np.nonzero(fg)
    x0, x1, y0, y1 = int(xs.min()), int(xs.max()) + 1, int(ys.min()), int(ys.max()) + 1
    mx, my = _round_half_up(margin * (x1 - x0)), _round_half_up(margin * (y1 - y0))
    height, width = fg.shape
    return max(0, x0 - mx), max(0, y0 - my), min(width, x1 + mx), min(height, y1 + my)


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def parse_fill(value: Any, *, metric: str = "clip_i_seg") -> tuple[int, int, int]:
    """A fill colour from (r, g, b) 0..255 or a colour name / `#rrggbb` string; `metric` names the error's source."""
    if isinstance(value, str):
        try:
            rgb = ImageColor.getrgb(value)
        except ValueError:
            raise InputError(
                f"{metric} fill {value!r} is not a colour; use e.g. white, black, #808080 or (r, g, b)"
            ) from None
        return tuple(int(c) for c in rgb[:3])  # type: ignore[return-value]
    if (
        isinstance(value, (tuple, list))
        and len(value) == 3
        and all(isinstance(c, (int, np.integer)) and 0 <= c <= 255 for c in value)
    ):
        return tuple(int(c) for c in value)  # type: ignore[return-value]
    raise InputError(f"{metric} fill must be (r, g, b) integers in 0..255 or a colour name, got {value!r}")


def validate_seg_params(metric: str, params: dict[str, Any]) -> dict[str, Any]:
    """`params` (a subset of `SEG_PARAMS`) checked and normalized: fill -> (r, g, b), margin -> float in [0, 1]."""
    params = dict(params)
    if "fill" in params:
        params["fill"] = parse_fill(params["fill"], metric=metric)
    if "margin" in params:
        margin = params["margin"]
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin <= 1:
            raise InputError(
                f"{metric} margin must be a number in [0, 1] (a fraction of the mask's box), got {margin!r}"
            )
        params["margin"] = float(margin)
    if "segment_reference" in params and not isinstance(params["segment_reference"], bool):
        raise InputError(f"{metric} segment_reference must be true or false, got {params['segment_reference']!r}")
    return params


class SegmentedSubjectScorer(ReferenceScorer):
    """Base of the -Seg scorers: the rule above, then the base metric's `_score_pairs` on what it produced.

    A -Seg scorer is `class XSegScorer(SegmentedSubjectScorer, XScorer)`, `XScorer` being the base metric's
    `ReferenceScorer` (it loads the backbone and implements `_score_pairs`). Parameters `fill` (default white), `margin` (0.05), `segment_reference`
    (False). `extras`: the base metric's (`per_ref`), `out_box` (x0, y0, x1, y1) and, with `segment_reference`,
    `ref_boxes`."""

    PARAMS = SEG_PARAMS

    def _validate(self, params: dict[str, Any]) -> dict[str, Any]:
        return validate_seg_params(self.spec.name, params)

    @property
    def needs(self) -> Needs:
        needs = self.spec.needs
        return replace(needs, ref_masks=True) if self.params["segment_reference"] else needs

    def _compute(self, samples: list[Sample], backbone: Any) -> list[Computed]:
        results: list[Computed | None] = []
        jobs: list[tuple[int, Image.Image, Sequence[Image.Image | InputImage], dict[str, Any]]] = []
        for sample in samples:
            prepared = self._segment(sample)
            if isinstance(prepared[0], Image.Image):
                jobs.append((len(results), *prepared))
                results.append(None)
            else:
                results.append(prepared)
        scored = self._score_pairs([(out, refs) for _, out, refs, _ in jobs], backbone) if jobs else []
        for (i, _, _, extras), (value, reason, more) in zip(jobs, scored):
            results[i] = (value, reason, {**extras, **more})
        return results  # type: ignore[return-value]

    def _segment(
        self, sample: Sample
    ) -> tuple[Image.Image, Sequence[Image.Image | InputImage], dict[str, Any]] | Computed:
        """(segmented output, references (segmented or not), extras), or the NaN result of an empty mask."""
        fill, margin = self.params["fill"], self.params["margin"]
        out = segment_subject(sample.out_image, sample.out_mask, fill=fill, margin=margin, name="out_mask")
        if out is None:
            return math.nan, "the output mask is empty (no pixel >= 0.5)", {}
        extras: dict[str, Any] = {"out_box": list(out[1])}
        if not self.params["segment_reference"]:
            return out[0], list(sample.refs), extras
        segmented = [
            segment_subject(r, sample.ref_mask(i), fill=fill, margin=margin, name=f"ref_masks[{i}]")
            for i, r in enumerate(sample.refs)
        ]
        empty = [i for i, seg in enumerate(segmented) if seg is None]
        if empty:
            return math.nan, f"reference mask(s) {empty} empty (no pixel >= 0.5)", extras
        extras["ref_boxes"] = [list(seg[1]) for seg in segmented]  # type: ignore[index]
        return out[0], [seg[0] for seg in segmented], extras  # type: ignore[index]
