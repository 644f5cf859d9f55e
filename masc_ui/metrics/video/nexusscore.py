"""NexusScore (OpenS2V-Nexus): subject consistency by detect-then-compare. Range [0, 1] as declared (see below).

For each of 32 frames (`numpy.linspace(0, T - 1, 32, dtype=int)`) and each reference image with a class label:
1. detect the reference's object in the frame with the image-prompted detector (`nexus_detector`: OWLv2
   image-guided detection standing in for OpenS2V's YOLO-World v2-L image prompts; detections with confidence
   > 0.5, NMS at IoU 0.7, at most 100);
2. crop each box from the frame (coordinates rounded to whole pixels; empty crops dropped) and embed the crop with GME
   (as a document, `masc_ui.metrics.video.gme`);
3. keep a crop when its detection confidence > `conf_threshold` (0.6), its GME similarity to the class label (the
   label embedded as a query, "Find an image that matches the given text.") > `text_threshold` (0.30), and its GME
   image-image similarity to the reference is not exactly 0;
4. NexusScore = (mean of the kept crops' image similarities) / (number of frames with at least one detection of any
   reference) — the v1.1 script's rule; 0 when nothing is kept (as there); NaN when no reference has a label.

The division is OpenS2V issue #36 ("why divided by frame_obj?"): a subject detected in every frame scores lower than
one detected in a few, so flicker is rewarded. It is kept so that values compare with OpenS2V's leaderboard; the
undivided mean is in extras (`mean_kept`). The value can leave [0, 1] only if kept similarities are negative.

References whose label is None are skipped (OpenS2V skips `Man`/`Woman` references in face videos and renames them
`human` in human videos: `masc_ui.datasets.opens2v.nexus_class_labels` applies that rule).

Extras: `detections` (per detection: `frame`, `ref`, `box` [x0, y0, x1, y1], `confidence`, `text_similarity`,
`image_similarity`, `kept`), `n_frames_with_detection`, `n_kept`, `mean_kept`, `detector`, `class_labels`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ...errors import InputError
from ...imaging import FrameRule, ImageSource, InputImage, VideoFrame, open_image
from ...models.auto_profile import effective_model_ids, ensure_demo_checkpoints
from ...models.precision import precision_params
from .gme import GME_QUERY_INSTRUCTION, GmeEmbedder, batched, gme_info_fields, shared_gme
from .nexus_detector import DETECTION_THRESHOLD, MAX_BOXES, NMS_IOU, ImagePromptedDetector, shared_nexus_detector
from .sample import VideoNeeds, VideoSample
from .scorer import Computed, VideoScorer

NEXUS_FRAMES = FrameRule("linspace", 32)
CONF_THRESHOLD = 0.6
TEXT_THRESHOLD = 0.30


def nexus_score(
    frames: Iterable[VideoFrame],
    refs: Sequence[ImageSource | InputImage],
    labels: Sequence[str | None],
    detector: ImagePromptedDetector,
    gme: GmeEmbedder,
    *,
    conf_threshold: float = CONF_THRESHOLD,
    text_threshold: float = TEXT_THRESHOLD,
) -> Computed:
    """(value, reason, extras) of the module's rule for `frames` (decoded `VideoFrame`s, consumed in batches as they
    arrive), reference images `refs` and their class `labels` (None = skip that reference)."""
    if len(labels) != len(refs):
        raise InputError(
            f"nexusscore needs one class label per reference image: {len(refs)} reference(s), {len(labels)} label(s)"
        )
    used = [
        (r, ref, label.strip())
        for r, (ref, label) in enumerate(zip(refs, labels))
        if label is not None and label.strip()
    ]
    extras: dict[str, Any] = {"detector": detector.name, "class_labels": [label for _, _, label in used]}
    if not used:
        return float("nan"), "no reference image has a class label to detect", extras
    ref_images = [open_image(ref, name=f"reference image {r + 1}") for r, ref, _ in used]
    ref_vecs = gme.image_embeddings(ref_images)
    label_vecs = gme.text_embeddings([label for _, _, label in used], GME_QUERY_INSTRUCTION)
    detections: list[dict[str, Any]] = []
    frames_with_detection = 0
    for batch in batched(frames, gme.batch_size):
        found = detector.detect([f.image for f in batch], ref_images)
        crops, rows = [], []
        for frame, per_ref in zip(batch, found):
            frames_with_detection += any(per_ref)
            for k, boxes in enumerate(per_ref):
                for det in boxes:
                    x0, y0, x1, y1 = (int(round(v)) for v in det.box)
                    if x1 <= x0 or y1 <= y0:
                        continue
                    crops.append(frame.image.pixels.crop((x0, y0, x1, y1)))
                    rows.append(
                        {
                            "frame": frame.index,
                            "ref": used[k][0],
                            "box": [round(v, 2) for v in det.box],
                            "confidence": det.confidence,
                            "_k": k,
                        }
                    )
        if crops:
            crop_vecs = gme.image_embeddings(crops)
            for row, vec in zip(rows, crop_vecs):
                k = row.pop("_k")
                row["text_similarity"] = float(vec @ label_vecs[k])
                row["image_similarity"] = float(vec @ ref_vecs[k])
                row["kept"] = (
                    row["confidence"] > conf_threshold
                    and row["text_similarity"] > text_threshold
                    and row["image_similarity"] != 0.0
                )
        detections += rows
    kept = [row["image_similarity"] for row in detections if row["kept"]]
    mean_kept = float(np.mean(np.asarray(kept, np.float32))) if kept else None
    extras.update(
        detections=detections, n_frames_with_detection=frames_with_detection, n_kept=len(kept), mean_kept=mean_kept
    )
    if mean_kept is None:
        return 0.0, None, extras
    return mean_kept / frames_with_detection, None, extras


class NexusScoreScorer(VideoScorer):
    """NexusScore of each video (see the module docstring). Params: `conf_threshold` (0.6), `text_threshold`
    (0.30)."""

    FRAME_RULE = NEXUS_FRAMES
    NEEDS = VideoNeeds(reference=True, class_labels=True)
    PARAMS = {"conf_threshold": CONF_THRESHOLD, "text_threshold": TEXT_THRESHOLD}

    def _validate(self, params: dict[str, Any]) -> dict[str, Any]:
        for name, value in params.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1.0 <= float(value) <= 1.0:
                raise InputError(f"nexusscore parameter {name} must be a number in [-1, 1], got {value!r}")
        return {name: float(value) for name, value in params.items()}

    def parts(self) -> tuple[ImagePromptedDetector, GmeEmbedder]:
        """(detector, GME embedder), loaded on first call and shared through `self.models`."""
        ensure_demo_checkpoints(self.settings, ("gme", "nexus_detector"), self.models)
        ids = effective_model_ids(self.settings, self.models)
        return (
            shared_nexus_detector(self.models, self.settings, ids.nexus_detector),
            shared_gme(self.models, self.settings, ids.gme),
        )

    def _provenance_fields(self) -> dict[str, Any]:
        detector, gme = self.parts()
        info = detector.info
        return {
            **gme_info_fields(gme.info),
            "detector": info.name,
            "detector_model_id": info.model_id,
            "detector_revision": info.revision,
            "detection_threshold": DETECTION_THRESHOLD,
            "nms_iou": NMS_IOU,
            "max_boxes": MAX_BOXES,
            "division": "frames with a detection (v1.1, OpenS2V issue #36)",
            **{f"detector_{k}": v for k, v in precision_params(info.dtype, list(info.float32_parts)).items()},
        }

    def _score_video(self, sample: VideoSample, frames: Iterator[VideoFrame]) -> Computed:
        detector, gme = self.parts()
        return nexus_score(
            frames,
            sample.ref_images(),
            sample.class_labels,
            detector,
            gme,
            conf_threshold=self.params["conf_threshold"],
            text_threshold=self.params["text_threshold"],
        )
