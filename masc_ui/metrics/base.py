"""What every metric declares once (`MetricSpec`), the one scorer interface (`Scorer`), and the shared
check of a batch's inputs. No torch here: the UI, exports and agreement analysis read specs only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import InputError
from .sample import MetricValue, Sample

MASK_NEEDS = ("none", "out", "ref", "both")
FAMILIES = {
    "masc": ("MaSC", "Concept Preservation and Prompt Following from one SigLIP2 pass, with patch maps."),
    "clip": (
        "CLIP family",
        "Embedding cosines of CLIP-architecture models: CLIP-I, CLIP-I-Seg, CLIP-T, CLIPScore, PickScore.",
    ),
    "dino": (
        "DINO family",
        "Self-supervised ViT embeddings of output and reference: DINO-I, DINOv2-I, and DreamSim (DINO and CLIP "
        "ViTs tuned to human similarity judgements); each also on the subject only (-Seg).",
    ),
    "vqa": (
        "Image-text questions",
        "A vision-language model asked whether the output shows the prompt: VQAScore, ITMScore.",
    ),
    "faces": ("Faces", "Face identity and face quality, on detected and aligned faces."),
    "quality": ("Quality and preference", "Single-image scores of how an output looks (art-likeness, preference)."),
    "video": ("Video (subject-to-video)", "OpenS2V's video scores, and the image metrics frame by frame."),
    "judges": (
        "Chat-model judges",
        "A chat model asked a benchmark's rubric about the output (the DreamBench++ judge: CP and PF, 0-4).",
    ),
    "external": ("Imported values", "Values imported with a benchmark (e.g. a judge's ratings); no scorer here."),
}
"""Family name -> (title, one line): how the metrics are grouped in the docs and the `metrics` listing."""
MEDIA = ("image", "video")
MISSING_POLICIES = ("raise", "nan")


@dataclass(frozen=True)
class Needs:
    """The inputs a scorer (with its parameters) needs from each sample."""

    out_mask: bool = False
    ref_masks: bool = False
    prompt: bool = False
    reference: bool = False

    def missing(self, sample: Sample) -> list[str]:
        """Names of the needed inputs `sample` lacks: `reference`, `prompt`, `out_mask`, `ref_masks[i]`."""
        missing = []
        if self.reference and not sample.refs:
            missing.append("reference")
        if self.prompt and not (sample.prompt or "").strip():
            missing.append("prompt")
        if self.out_mask and sample.out_mask is None:
            missing.append("out_mask")
        if self.ref_masks:
            missing += [f"ref_masks[{i}]" for i in range(len(sample.refs)) if sample.ref_mask(i) is None]
        return missing


@dataclass(frozen=True)
class MetricSpec:
    """One metric's declaration: the only place its range, direction and convention are written."""

    name: str
    """Registry key, e.g. `clip_i`."""
    display_name: str
    """How screens and exports title it, e.g. `CLIP-I`."""
    range: tuple[float, float]
    """(lo, hi) of the raw value; `math.inf` where unbounded."""
    higher_is_better: bool
    convention: str
    """One sentence: the formula and averaging convention."""
    paper: str
    """The paper (or benchmark) whose convention it follows; empty for external metrics."""
    needs_masks: str = "none"
    """Which masks it needs: `none`, `out`, `ref` or `both`."""
    needs_prompt: bool = False
    needs_reference: bool = False
    backbone_settings: tuple[str, ...] = ()
    """Names of the `Settings` fields that choose its backbone(s), e.g. `("clip_model",)`."""
    external: bool = False
    """True for metrics imported with their values (e.g. a GPT-4o judge): no scorer exists."""
    media: str = "image"
    """What its scorer judges: `image` (`Sample`s) or `video` (`masc_ui.metrics.video.sample.VideoSample`s)."""
    family: str = "external"
    """Its family (a key of `FAMILIES`): the docs page and listing group it belongs to."""

    def __post_init__(self) -> None:
        if self.media not in MEDIA:
            raise InputError(f"metric {self.name}: media must be one of {MEDIA}, got {self.media!r}")
        if self.family not in FAMILIES:
            raise InputError(f"metric {self.name}: family must be one of {tuple(FAMILIES)}, got {self.family!r}")
        if self.needs_masks not in MASK_NEEDS:
            raise InputError(f"metric {self.name}: needs_masks must be one of {MASK_NEEDS}, got {self.needs_masks!r}")
        lo, hi = self.range
        if not lo < hi:
            raise InputError(f"metric {self.name}: range must be (lo, hi) with lo < hi, got {self.range}")

    @property
    def needs(self) -> Needs:
        return Needs(
            out_mask=self.needs_masks in ("out", "both"),
            ref_masks=self.needs_masks in ("ref", "both"),
            prompt=self.needs_prompt,
            reference=self.needs_reference,
        )

    def in_range(self, value: float) -> bool:
        lo, hi = self.range
        return math.isnan(value) or lo <= value <= hi


class Scorer(Protocol):
    """Scores a batch: one `MetricValue` per sample, in order (NaN value + reason when not computable)."""

    spec: MetricSpec
    needs: Needs

    def score(self, samples: Sequence[Sample], *, missing: str = "raise") -> list[MetricValue]:
        """`missing="raise"`: a sample lacking a needed input raises `InputError` naming the metric, the input
        and the sample index, before any model runs. `missing="nan"`: such samples get NaN with that reason."""
        ...


@dataclass
class InputCheck:
    """Which samples of a batch can be scored; the others have a reason."""

    ok: list[int] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)


def check_inputs(metric: str, needs: Needs, samples: Sequence[Sample], missing: str) -> InputCheck:
    """Apply the `missing` policy (see `Scorer.score`) to `samples`."""
    if missing not in MISSING_POLICIES:
        raise InputError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    check = InputCheck()
    for i, sample in enumerate(samples):
        if not isinstance(sample, Sample):
            raise InputError(f"{metric}: sample {i} is a {type(sample).__name__}, expected masc_ui.metrics.Sample")
        if sample.prompt is not None and not isinstance(sample.prompt, str):
            raise InputError(f"{metric}: sample {i}'s prompt must be a string, got {type(sample.prompt).__name__}")
        lacking = needs.missing(sample)
        if not lacking:
            check.ok.append(i)
            continue
        reason = f"{metric} needs {', '.join(lacking)}, which sample {i} lacks"
        if missing == "raise":
            raise InputError(f"{reason}: {_what_to_do(lacking)}")
        check.reasons[i] = reason
    return check


def nan_value(
    metric: str, reason: str, provenance: dict[str, Any], extras: dict[str, Any] | None = None
) -> MetricValue:
    """A NaN `MetricValue` with its reason."""
    return MetricValue(metric=metric, value=float("nan"), reason=reason, extras=extras or {}, provenance=provenance)


def _what_to_do(lacking: list[str]) -> str:
    hints = []
    if "reference" in lacking:
        hints.append("add a reference image")
    if "prompt" in lacking:
        hints.append("give the generation prompt")
    if any(name.endswith("mask") or name.startswith("ref_masks") for name in lacking):
        hints.append("draw or import the subject's mask")
    return "; ".join(hints) + ", or leave this metric out"


def check_params(metric: str, params: dict[str, Any], allowed: Sequence[str]) -> None:
    """Raise `InputError` naming the metric for parameters it does not take."""
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        takes = f"it takes {', '.join(allowed)}" if allowed else "it takes none"
        raise InputError(f"metric {metric} has no parameter(s) {', '.join(unknown)}; {takes}")
