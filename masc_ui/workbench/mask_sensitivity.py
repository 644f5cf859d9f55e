"""Mask sensitivity: how far a sample's mask-dependent scores move when its masks change a little.

For one sample, every metric whose spec needs a mask (`needs_masks != "none"`: MaSC CP and PF, the `*_seg`
metrics) is scored again on variants of the sample that differ only in their masks:

- every mask (each reference's and the output's; for a video, each frame's) eroded by `px` pixels and dilated by
  `px` pixels, for each `px` asked (`imaging.mask_morphology.shift_mask`; 0 px reproduces the sample itself);
- each other mask source offered (`sources`: e.g. the masks segmented by the subject's name, or another stored
  source), which replaces the masks it has and keeps the others.

Each variant goes through the same scoring path as the sample itself (`score_metrics`, one sample at a time),
so a variant whose masks equal the sample's gives exactly the same value. The spread of a metric is
max - min over the finite values of the sample and its variants, in the metric's own units.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, ModelUnavailableError
from ..imaging.mask_morphology import MAX_SHIFT_PX, shift_mask
from ..metrics.sample import Sample
from ..metrics.video.frame_masks import FrameMasks
from ..models.loaded_models import ModelRegistry
from ..settings import Settings
from .masks import Segmentation
from .users import Accounts

DEFAULT_SHIFTS_PX = (3,)
"""Erode and dilate by 3 px unless told otherwise."""


@dataclass(frozen=True)
class MaskSet:
    """Replacement masks of one source: `ref_masks[i]` for reference i (None keeps the sample's), `out_mask` for
    the output (None keeps the sample's; for a video, a 2-D array or a `FrameMasks`)."""

    ref_masks: tuple[np.ndarray | None, ...] = ()
    out_mask: Any = None


@dataclass(frozen=True)
class MetricSensitivity:
    """One metric's values on the sample and on each variant (None where it could not be computed)."""

    metric: str
    display_name: str
    higher_is_better: bool
    stored: float | None
    """The value with the sample's own masks."""
    values: dict[str, float | None]
    """Variant label -> value."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Label (`stored` or a variant's) -> why its value is missing."""

    def finite(self) -> list[float]:
        """The values that were computed: the sample's and its variants'."""
        found = [self.stored, *self.values.values()]
        return [v for v in found if v is not None and math.isfinite(v)]

    @property
    def low(self) -> float | None:
        vals = self.finite()
        return min(vals) if vals else None

    @property
    def high(self) -> float | None:
        vals = self.finite()
        return max(vals) if vals else None

    @property
    def spread(self) -> float | None:
        """max - min over the computed values; None with fewer than two."""
        vals = self.finite()
        return max(vals) - min(vals) if len(vals) >= 2 else None


@dataclass(frozen=True)
class SensitivityReport:
    """The mask-sensitivity check of one sample."""

    variants: tuple[str, ...]
    """Labels of the variants scored, in order (e.g. `eroded 3 px`, `dilated 3 px`, `subject name`)."""
    metrics: tuple[MetricSensitivity, ...]
    skipped: dict[str, str] = field(default_factory=dict)
    """Variant label -> why it could not be built (e.g. no text segmenter offline)."""
    notes: dict[str, str] = field(default_factory=dict)
    """Variant label -> what to know about it (e.g. a doubtful segmentation)."""

    def record(self) -> dict[str, Any]:
        """JSON-able: the variants, each metric's values, range (`low`, `high`) and `spread`, the skipped variants."""
        return {
            "variants": list(self.variants),
            "metrics": {
                m.metric: {
                    "stored": m.stored,
                    "values": dict(m.values),
                    "reasons": dict(m.reasons),
                    "low": m.low,
                    "high": m.high,
                    "spread": m.spread,
                }
                for m in self.metrics
            },
            "skipped": dict(self.skipped),
            "notes": dict(self.notes),
        }

    def rows(self) -> list[list[str]]:
        """A table: metric, the sample's value, each variant's value, spread (`numbers.format_value`)."""
        out = []
        for m in self.metrics:
            shown = [_fmt(m.stored), *(_fmt(m.values.get(label)) for label in self.variants), _fmt(m.spread)]
            out.append([m.display_name, *shown])
        return out

    def header(self) -> list[str]:
        return ["metric", "own masks", *self.variants, "spread"]


def _fmt(value: float | None) -> str:
    from ..analysis.numbers import format_value

    if value is None or not math.isfinite(value):
        return "n/a"
    return format_value(value)


def check_shifts(shifts: Sequence[int]) -> tuple[int, ...]:
    """The pixel shifts asked for, each a whole number in 0..`MAX_SHIFT_PX`, without repeats; InputError otherwise."""
    out: list[int] = []
    for px in shifts:
        if isinstance(px, bool) or not isinstance(px, (int, np.integer)) or not 0 <= int(px) <= MAX_SHIFT_PX:
            raise InputError(f"mask sensitivity: each shift is a whole number of pixels from 0 to {MAX_SHIFT_PX}")
        if int(px) not in out:
            out.append(int(px))
    if not out:
        raise InputError("mask sensitivity: give at least one shift in pixels (e.g. 3)")
    return tuple(out)


def shifted_variants(sample: Sample, shifts: Sequence[int]) -> dict[str, Sample]:
    """Label -> `sample` with every mask eroded / dilated by each of `shifts` pixels (`eroded 3 px`, `dilated 3 px`;
    `0 px` is the sample itself), in that order."""
    variants: dict[str, Sample] = {}
    for px in check_shifts(shifts):
        if px == 0:
            variants["0 px"] = sample
            continue
        variants[f"eroded {px} px"] = _shifted(sample, -px)
        variants[f"dilated {px} px"] = _shifted(sample, px)
    return variants


def spread_record(stored: float | None, values: Mapping[str, float | None]) -> dict[str, Any]:
    """The JSON-able summary of one metric's check: `values` (label -> value, None where not computed), `low`,
    `high` and `spread` over the finite values of `stored` and `values` (None with fewer than two)."""
    m = MetricSensitivity("", "", True, stored, dict(values))
    return {"values": dict(values), "low": m.low, "high": m.high, "spread": m.spread}


def _shifted(sample: Sample, px: int) -> Sample:
    """`sample` with every mask shifted by `px` (>0 dilated, <0 eroded)."""
    refs = tuple(
        None if m is None else shift_mask(m, px, name=f"mask of reference {i + 1}")
        for i, m in enumerate(sample.ref_masks)
    )
    out = sample.out_mask
    if isinstance(out, FrameMasks):
        out = dataclasses.replace(
            out, masks={k: shift_mask(m, px, name=f"mask of frame {k}") for k, m in out.masks.items()}
        )
    elif out is not None:
        out = shift_mask(out, px, name="mask of the output")
    return dataclasses.replace(sample, ref_masks=refs, out_mask=out)


def _with_source(sample: Sample, masks: MaskSet) -> Sample:
    n = len(sample.refs)
    own = tuple(sample.ref_masks) + (None,) * (n - len(sample.ref_masks))
    new = tuple(masks.ref_masks) + (None,) * (n - len(masks.ref_masks))
    refs = tuple(own[i] if new[i] is None else new[i] for i in range(n))
    out = sample.out_mask if masks.out_mask is None else masks.out_mask
    return dataclasses.replace(sample, ref_masks=refs, out_mask=out)


class MaskSensitivity:
    """The mask-sensitivity check (Score tab, `masc-ui score --mask-sensitivity`)."""

    def __init__(
        self, settings: Settings, models: ModelRegistry, segmentation: Segmentation, accounts: Accounts
    ) -> None:
        self._settings = settings
        self._models = models
        self._segmentation = segmentation
        self._accounts = accounts

    def mask_metrics(self, sample: Sample, names: Sequence[str] | None = None) -> list[str]:
        """Of `names` (default: every metric that applies to `sample`), those that need a mask."""
        from ..metrics.registry import get_spec, metrics_for

        wanted = list(names) if names else [s.name for s in metrics_for([sample], self._settings)]
        return [n for n in wanted if get_spec(n).needs_masks != "none"]

    def by_name(self, sample: Sample, *, user: str | None) -> tuple[MaskSet | None, str]:
        """The masks of `sample`'s images segmented by its subject's name, and a note (why there are none, or which
        were doubtful). Text-prompted segmentation (SAM 3) of each reference and of the output (each scored frame
        of a video)."""
        if not (sample.subject or "").strip():
            return None, "no subject name to segment by"
        try:
            refs = [self._segmentation.segment_by_name(r, sample.subject, user=user) for r in sample.refs]
            if sample.is_video:
                out: Any = self._segmentation.segment_frames_by_name(sample.out_video, sample.subject, user=user)
                doubtful_out = bool(out.params.get("doubtful"))
            else:
                seg = self._segmentation.segment_by_name(sample.out_image, sample.subject, user=user)
                out, doubtful_out = seg.mask, seg.doubtful
        except (ModelUnavailableError, InputError) as exc:
            return None, f"segmenting by name failed: {exc}"
        doubtful = [f"reference {i + 1}" for i, r in enumerate(refs) if r.doubtful]
        if doubtful_out:
            doubtful.append("the output")
        note = f"doubtful segmentation of {', '.join(doubtful)}" if doubtful else ""
        return MaskSet(tuple(r.mask for r in refs), out), note

    def run(
        self,
        sample: Sample,
        names: Sequence[str] | None = None,
        *,
        user: str | None,
        shifts: Sequence[int] = DEFAULT_SHIFTS_PX,
        sources: Mapping[str, MaskSet] | None = None,
        by_name: bool = False,
    ) -> SensitivityReport:
        """Score the mask-dependent metrics among `names` on `sample` and on its mask variants: eroded and dilated
        by each of `shifts` pixels, each of `sources` (label -> masks), and, with `by_name`, the masks segmented by
        the subject's name (label `subject name`; skipped with the reason when that fails). InputError when no
        asked metric needs a mask, or the sample has no mask at all. Admins only."""
        from ..metrics.registry import get_spec, score_metrics

        self._accounts.require_admin(user, "checking mask sensitivity")
        shifts = check_shifts(shifts)
        metrics = self.mask_metrics(sample, names)
        if not metrics:
            raise InputError(
                "mask sensitivity: none of the chosen metrics uses a mask; choose CP, PF or a *_seg metric"
            )
        if sample.out_mask is None and all(m is None for m in sample.ref_masks):
            raise InputError("mask sensitivity: the sample has no mask to vary; draw or segment the subject first")
        variants = shifted_variants(sample, shifts)
        skipped: dict[str, str] = {}
        notes: dict[str, str] = {}
        for label, masks in (sources or {}).items():
            variants[label] = _with_source(sample, masks)
        if by_name:
            found, note = self.by_name(sample, user=user)
            if found is None:
                skipped["subject name"] = note
            else:
                variants["subject name"] = _with_source(sample, found)
                if note:
                    notes["subject name"] = note

        def values(s: Sample) -> dict[str, tuple[float | None, str | None]]:
            got = score_metrics([s], metrics, self._settings, self._models, missing="nan")
            out: dict[str, tuple[float | None, str | None]] = {}
            for name in metrics:
                mv = got[name][0]
                ok = mv.value is not None and math.isfinite(mv.value)
                out[name] = (float(mv.value) if ok else None, None if ok else (mv.reason or "not computed"))
            return out

        own = values(sample)
        per_variant = {label: values(s) for label, s in variants.items()}
        rows = []
        for name in metrics:
            spec = get_spec(name)
            own_reason = own[name][1]
            reasons = {"own masks": own_reason} if own_reason else {}
            reasons.update({label: got[name][1] or "" for label, got in per_variant.items() if got[name][1]})
            rows.append(
                MetricSensitivity(
                    name,
                    spec.display_name,
                    spec.higher_is_better,
                    own[name][0],
                    {label: got[name][0] for label, got in per_variant.items()},
                    reasons,
                )
            )
        return SensitivityReport(tuple(variants), tuple(rows), skipped, notes)
