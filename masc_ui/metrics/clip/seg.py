"""CLIP-I-Seg: CLIP-I of the subject only, by the -Seg rule of `masc_ui.metrics.segmented_subject` (fill outside
the output's mask, crop to the mask's box + margin, the reference segmented the same way on request)."""

from __future__ import annotations

from ..segmented_subject import SegmentedSubjectScorer
from .family import ClipImageScorer


class ClipSegScorer(SegmentedSubjectScorer, ClipImageScorer):
    """CLIP-I-Seg; parameters `fill` (default white), `margin` (default 0.05), `segment_reference` (False).
    `extras`: `per_ref`, `out_box` (x0, y0, x1, y1) and, with `segment_reference`, `ref_boxes`."""
