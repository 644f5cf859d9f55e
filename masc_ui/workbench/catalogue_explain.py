"""Explain the catalogue metrics of one sample with pictures and text, as the Score tab shows them:

- VQAScore: the exact question asked, P(Yes) (the value) and P(No), the model family and input length;
- ITMScore: P(match) of BLIP-2's matching head, the prompt's token count and whether it was truncated;
- FaceSim: each image with every detected face's box and landmarks, the largest face used, and the two aligned
  112x112 crops the recognizer read (one pair per reference);
- FaceScore: the output with each scored face's box labelled with its score.

A metric that cannot apply says why (its `MetricValue.reason`, e.g. "no face found in the output"), never a bare NaN.
The values are those of Run (`Scoring.explain_catalogue` scores with the same metric list: a result-cache hit); the
face pictures come from the scorers' own `explain` (detections and embeddings cached, no second forward). No gradio
here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from ..analysis.numbers import format_value
from ..errors import InputError
from ..metrics.registry import get_scorer, get_spec
from ..metrics.sample import MetricValue, Sample
from ..models.loaded_models import ModelRegistry
from ..settings import Settings

FACE_CROP_SIZE = 112
"""Side in pixels of the aligned face crop FaceSim's recognizer reads."""
LANDMARK_NAMES = {5: "5 landmarks (eyes, nose, mouth corners)", 2: "2 landmarks (eye centres only)"}
"""Landmark count of a detector -> what they are (SCRFD, RetinaFace and MTCNN give 5)."""


@dataclass(frozen=True)
class Picture:
    image: Image.Image
    """RGB."""
    caption: str


@dataclass
class MetricExplanation:
    """One metric's explanation: its value (None when not computable, `reason` says why), text lines and pictures."""

    metric: str
    display_name: str
    value: float | None
    reason: str | None
    lines: list[str] = field(default_factory=list)
    """Markdown lines (facts, one per line)."""
    pictures: list[Picture] = field(default_factory=list)

    def markdown(self) -> str:
        head = (
            f"**{self.display_name}** = {format_value(self.value)}"
            if self.value is not None
            else f"**{self.display_name}**: not computable: {self.reason or 'no reason given'}"
        )
        return "\n".join([head, *(f"- {line}" for line in self.lines)])


@dataclass
class CatalogueExplanations:
    """The explanations of every asked catalogue metric, in registry order."""

    items: list[MetricExplanation]

    @property
    def pictures(self) -> list[Picture]:
        return [p for item in self.items for p in item.pictures]

    def markdown(self) -> str:
        return "\n\n".join(item.markdown() for item in self.items)


def explain_vqascore(
    sample: Sample, value: MetricValue, settings: Settings, models: ModelRegistry
) -> MetricExplanation:
    """The question and the answer probabilities VQAScore's extras hold (`masc_ui.metrics.vqa.vqascore`)."""
    ex = _base(value)
    extras = value.extras or {}
    params = (value.provenance or {}).get("params", {})
    if "question" in extras:
        ex.lines.append(f"question asked (exact text): {code_span(extras['question'])}")
    if "p_yes" in extras:
        how = (
            "exp(−mean cross-entropy of the teacher-forced answer tokens)"
            if params.get("family") == "clip-flant5"
            else "softmax of the next-token logits"
        )
        ex.lines.append(
            f"P(Yes) = {format_value(extras['p_yes'])} · P(No) = {format_value(extras['p_no'])} ({how}; the two need not add up to 1)"
        )
    if "input_tokens" in extras:
        ex.lines.append(
            f"model family: {params.get('family', 'unknown')} · input: {extras['input_tokens']} tokens · "
            f"answer token id {extras.get('answer_token_id')}"
        )
    return ex


def explain_itmscore(
    sample: Sample, value: MetricValue, settings: Settings, models: ModelRegistry
) -> MetricExplanation:
    """P(match) of the ITM head and the prompt's token count (`masc_ui.metrics.vqa.itmscore`)."""
    ex = _base(value)
    extras = value.extras or {}
    if ex.value is not None:
        ex.lines.append(
            f"P(match) = {format_value(ex.value)}: softmax of BLIP-2's image-text matching head for the prompt "
            f"{code_span(sample.prompt or '')}"
        )
    if "text_tokens" in extras:
        cut = "yes, the rest was not read" if extras.get("truncated") else "no"
        ex.lines.append(
            f"prompt: {extras['text_tokens']} tokens (limit {extras.get('max_text_tokens')}); truncated: {cut}"
        )
    return ex


def explain_facesim(sample: Sample, value: MetricValue, settings: Settings, models: ModelRegistry) -> MetricExplanation:
    """Faces drawn on the output and each reference, and each pair of aligned 112x112 crops
    (`FaceSimScorer.explain`)."""
    ex = _base(value)
    from ..metrics.faces.facesim import FaceSimScorer

    scorer = get_scorer("facesim", settings, models)
    assert isinstance(scorer, FaceSimScorer)
    extras = value.extras or {}
    for i, ref in enumerate(sample.refs):
        pair = scorer.explain(sample.out, ref)
        tag = f"reference {i + 1}" if len(sample.refs) > 1 else "reference"
        ex.pictures += [
            Picture(pair.ref_image, f"FaceSim: faces found in the {tag}"),
            Picture(pair.out_image, f"FaceSim: faces found in the output (vs the {tag})"),
        ]
        for crop, whose in ((pair.ref_crop, tag), (pair.out_crop, "output")):
            if crop is not None:
                ex.pictures.append(
                    Picture(
                        crop,
                        f"FaceSim: aligned {FACE_CROP_SIZE}×{FACE_CROP_SIZE} crop of the "
                        f"{whose} (what the recognizer reads)",
                    )
                )
        if pair.reason is None:
            ex.lines.append(f"{tag}: max(0, cos) = {format_value(pair.value)}")
        if i == 0:
            ex.lines.append(_detector_line(pair.detector, pair.reference_detector, extras))
    return ex


def explain_facescore(
    sample: Sample, value: MetricValue, settings: Settings, models: ModelRegistry
) -> MetricExplanation:
    """The output with each scored face's box labelled with its score (`FaceScoreScorer.explain`)."""
    ex = _base(value)
    from ..metrics.faces.facescore import FaceScoreScorer

    scorer = get_scorer("facescore", settings, models)
    assert isinstance(scorer, FaceScoreScorer)
    shown = scorer.explain(sample.out)
    ex.pictures.append(Picture(shown.image, "FaceScore: each scored face with its score"))
    if shown.faces:
        ex.lines.append(
            "per face: "
            + ", ".join(f"{format_value(score)} at box {box}" for box, score in shown.faces)
            + (" (mean)" if len(shown.faces) > 1 else "")
        )
    ex.lines.append(_detector_line(shown.detector, shown.reference_detector, {}))
    return ex


EXPLAINERS: dict[str, Callable[[Sample, MetricValue, Settings, ModelRegistry], MetricExplanation]] = {
    "vqascore": explain_vqascore,
    "itmscore": explain_itmscore,
    "facesim": explain_facesim,
    "facescore": explain_facescore,
}
"""Metric name -> its explainer; the metrics the Score tab's catalogue explanation covers."""


def catalogue_choice(sample: Sample, names: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """(the metrics to score, those of them to explain) for the Score tab's selection `names` (None: every
    explainable one); `InputError` when none of `names` is explainable, or the output is a video."""
    chosen = list(names) if names else list(EXPLAINERS)
    wanted = [n for n in chosen if n in EXPLAINERS]
    if not wanted:
        shown = ", ".join(get_spec(n).display_name for n in EXPLAINERS)
        raise InputError(f"none of the chosen metrics has a catalogue explanation: choose {shown}")
    if sample.is_video:
        raise InputError(
            "the output is a video: the catalogue explanations (VQAScore, ITMScore, FaceSim, FaceScore) "
            "are drawn for an image output"
        )
    return chosen, wanted


def explain_values(
    sample: Sample, values: Mapping[str, MetricValue], wanted: Sequence[str], settings: Settings, models: ModelRegistry
) -> CatalogueExplanations:
    """The explanation of each metric of `wanted` (names `EXPLAINERS` covers) from its value in `values` (Run's),
    the face pictures drawn by the scorers of `settings` in `models`."""
    return CatalogueExplanations([EXPLAINERS[n](sample, values[n], settings, models) for n in wanted])


def code_span(text: str) -> str:
    """`text` as a Markdown code span shown verbatim, whatever backticks it holds (CommonMark: a longer fence)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _base(value: MetricValue) -> MetricExplanation:
    finite = value.value is not None and not math.isnan(value.value)
    reason = None if finite else (value.reason or "not computable")
    return MetricExplanation(
        value.metric, get_spec(value.metric).display_name, float(value.value) if finite else None, reason
    )


def _detector_line(name: str, reference: bool, extras: dict[str, Any]) -> str:
    faces = (extras.get("faces") or {}).get("out", {}).get("faces") or []
    points = len(faces[0]["landmarks"]) if faces and faces[0].get("landmarks") else None
    marks = LANDMARK_NAMES.get(points, "") if points is not None else ""
    which = "the reference detector" if reference else "the packaged fallback, NOT the reference detector"
    return f"face detector: {name} ({which})" + (f"; {marks}" if marks else "")
