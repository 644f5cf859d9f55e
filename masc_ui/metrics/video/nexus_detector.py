"""The image-prompted open-vocabulary detector of NexusScore: a named, replaceable part.

OpenS2V detects the reference's object with YOLO-World v2-L prompted by the reference image (CLIP ViT-B/32 image
embedding, mmyolo/mmdet stack). That stack does not install with current torch/transformers, so the workbench uses
**OWLv2 image-guided detection** from transformers instead (`DETECTOR_NAME`), recorded in every value's provenance:
- query: the reference image through OWLv2's image tower; its query embedding is the class embedding of the box with
  the highest objectness (transformers' `Owlv2ForObjectDetection.embed_image_query`);
- frame: every patch predicts a box (cx, cy, w, h relative to the frame padded to a square at the bottom/right) and a
  class logit against the query; confidence = sigmoid(logit);
- post-processing as OpenS2V applies it to YOLO-World's output: boxes scaled to pixels (x max(width, height)) and
  clipped to the frame, confidence > `DETECTION_THRESHOLD` (0.5), non-maximum suppression at IoU `NMS_IOU` (0.7),
  at most `MAX_BOXES` (100) boxes by confidence. (transformers' `post_process_image_guided_detection` rescales scores
  to display alphas, so it is not used.)
Confidences of OWLv2 and YOLO-World are calibrated differently; NexusScore's 0.6 cut is kept as OpenS2V wrote it.

Precision: the OWLv2 image tower runs in the precision policy's dtype (pixels cast to it); the heads that turn its
patch features into the numbers the thresholds cut (`class_head`: query cosine, shift and scale -> logits;
`box_head` and its grid prior `box_bias`; `objectness_head`, which picks the query's box) always run in float32
with the checkpoint's own weights (the model is read in float32, then cast), query embeddings stay float32
(provenance params `detector_float32_parts` in bfloat16/float16).

Loaders are chosen by the checkpoint's `model_type` (`DETECTOR_LOADERS`); a new detector is one more entry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from ...errors import ModelUnavailableError
from ...imaging import ImageSource, InputImage, as_input_image
from ...models.loaded_models import ModelRegistry
from ...models.loading import load_pretrained, pick_device, pick_dtype
from ...models.precision import cast_model, float32_parts
from ...settings import Settings
from ..embedding_cache import EmbeddingCache
from ..provenance import checkpoint_revision

DETECTOR_NAME = "owlv2-image-guided"
DETECTION_THRESHOLD = 0.5
NMS_IOU = 0.7
MAX_BOXES = 100
BATCH_SIZE = 8
FLOAT32_HEADS = ("class_head", "box_head", "objectness_head")
"""OWLv2 parts kept in float32 under any precision (see the module docstring)."""
_WHAT = "NexusScore detector (nexus_detector, env MASC_NEXUS_DETECTOR)"


@dataclass(frozen=True)
class Detection:
    """One detected box in a frame."""

    box: tuple[float, float, float, float]
    """(x0, y0, x1, y1) in pixels of the frame, x right, y down, clipped to the frame."""
    confidence: float
    """The detector's confidence in [0, 1]."""


@dataclass(frozen=True)
class DetectorInfo:
    """What a value records about the detector."""

    name: str
    model_id: str
    revision: str
    device: str
    dtype: torch.dtype
    float32_parts: tuple[str, ...] = ()
    """Parts kept in float32 whatever `dtype` is (the heads)."""


class ImagePromptedDetector(Protocol):
    """What NexusScore reads of a detector (a loader of `DETECTOR_LOADERS` returns one)."""

    @property
    def name(self) -> str: ...

    @property
    def info(self) -> DetectorInfo: ...

    def detect(
        self, frames: Sequence[ImageSource | InputImage], queries: Sequence[ImageSource | InputImage]
    ) -> list[list[list[Detection]]]:
        """`[frame][query] -> [Detection, ...]`, each list sorted by confidence (highest first)."""
        ...


class Owlv2ImageGuidedDetector:
    """OWLv2 image-guided detection (see the module docstring). `detect(frames, queries)` -> for each frame, for each
    query image, its detections sorted by confidence (highest first). Query embeddings are cached by content."""

    def __init__(self, model: Any, processor: Any, info: DetectorInfo, *, batch_size: int = BATCH_SIZE) -> None:
        self.model = model
        self.image_processor = processor.image_processor if hasattr(processor, "image_processor") else processor
        self.info = info
        self.batch_size = batch_size
        self.query_cache = EmbeddingCache(1024)
        self.frame_forwards = 0
        self._count_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.info.name

    def detect(
        self, frames: Sequence[ImageSource | InputImage], queries: Sequence[ImageSource | InputImage]
    ) -> list[list[list[Detection]]]:
        """`[frame][query] -> [Detection, ...]` for `frames` and `queries` (`InputImage`s or what `as_input_image`
        takes)."""
        frame_images = [as_input_image(f, name=f"frame {i + 1}") for i, f in enumerate(frames)]
        query_images = [as_input_image(q, name=f"reference image {i + 1}") for i, q in enumerate(queries)]
        if not frame_images or not query_images:
            return [[[] for _ in query_images] for _ in frame_images]
        query_vecs = self.query_cache.get_or_compute_many(
            [q.sha256 for q in query_images], query_images, self._embed_queries
        )
        results: list[list[list[Detection]]] = []
        for start in range(0, len(frame_images), self.batch_size):
            results += self._detect_batch(frame_images[start : start + self.batch_size], query_vecs)
        return results

    def _pixels(self, images: list[InputImage]) -> torch.Tensor:
        pixels = self.image_processor(images=[img.pixels for img in images], return_tensors="pt")["pixel_values"]
        placed: torch.Tensor = pixels.to(self.info.device, self.info.dtype)
        return placed

    @torch.inference_mode()
    def _embed_queries(self, queries: list[InputImage]) -> np.ndarray:
        feature_map = self.model.image_embedder(pixel_values=self._pixels(queries))[0]
        b, h, w, d = feature_map.shape
        query_embeds: torch.Tensor
        query_embeds, _, _ = self.model.embed_image_query(feature_map.reshape(b, h * w, d), feature_map)
        return query_embeds[:, 0].float().cpu().numpy()

    @torch.inference_mode()
    def _detect_batch(self, frames: list[InputImage], query_vecs: np.ndarray) -> list[list[list[Detection]]]:
        from torchvision.ops import nms
        from transformers.image_transforms import center_to_corners_format

        feature_map = self.model.image_embedder(pixel_values=self._pixels(frames))[0]
        b, h, w, d = feature_map.shape
        image_feats = feature_map.reshape(b, h * w, d)
        corners = center_to_corners_format(self.model.box_predictor(image_feats, feature_map))
        # transformers annotates it with its `TensorType` enum (of names); it returns the kind of array it is given
        boxes = corners.float()  # type: ignore[attr-defined]
        queries = torch.as_tensor(query_vecs, device=self.info.device, dtype=self.model.class_head.dense0.weight.dtype)
        query_embeds = queries[None].expand(b, -1, -1)
        logits = self.model.class_predictor(image_feats, query_embeds)[0].float()  # (b, patches, queries)
        confidences = torch.sigmoid(logits)
        with self._count_lock:
            self.frame_forwards += len(frames)
        out = []
        for k, frame in enumerate(frames):
            width, height = frame.size
            pixel_boxes = boxes[k] * max(width, height)
            pixel_boxes[:, 0::2] = pixel_boxes[:, 0::2].clamp(0, width)
            pixel_boxes[:, 1::2] = pixel_boxes[:, 1::2].clamp(0, height)
            per_query = []
            for q in range(queries.shape[0]):
                conf = confidences[k, :, q]
                keep = torch.nonzero(conf > DETECTION_THRESHOLD).flatten()
                keep = keep[nms(pixel_boxes[keep], conf[keep], NMS_IOU)][:MAX_BOXES]
                found = []
                for i in keep.tolist():
                    x0, y0, x1, y1 = (float(v) for v in pixel_boxes[i].tolist())
                    found.append(Detection((x0, y0, x1, y1), float(conf[i])))
                per_query.append(found)
            out.append(per_query)
        return out


def load_owlv2_detector(model_id: str, settings: Settings) -> Owlv2ImageGuidedDetector:
    from transformers import AutoProcessor, Owlv2ForObjectDetection

    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    model = load_pretrained(Owlv2ForObjectDetection, model_id, what=_WHAT, dtype=torch.float32)
    box_bias = model.box_bias  # the grid's box prior, added to box_head's float32 output: kept in float32 too
    model = cast_model(model, device, dtype, float32_parts=FLOAT32_HEADS).eval()
    model.box_bias = box_bias.to(device)
    processor = load_pretrained(AutoProcessor, model_id, what=f"{_WHAT} processor")
    info = DetectorInfo(
        name=DETECTOR_NAME,
        model_id=model_id,
        revision=checkpoint_revision(model_id),
        device=device,
        dtype=dtype,
        float32_parts=tuple(float32_parts(model)),
    )
    return Owlv2ImageGuidedDetector(model, processor, info)


DETECTOR_LOADERS: dict[str, Callable[[str, Settings], ImagePromptedDetector]] = {"owlv2": load_owlv2_detector}
"""Checkpoint `model_type` -> loader of an image-prompted detector with `.name`, `.info` and `.detect(frames,
queries)`."""


def load_nexus_detector(model_id: str, settings: Settings) -> ImagePromptedDetector:
    """The detector for checkpoint `model_id`, by its `model_type` (see `DETECTOR_LOADERS`)."""
    from transformers import AutoConfig

    config = load_pretrained(AutoConfig, model_id, what=_WHAT)
    loader = DETECTOR_LOADERS.get(getattr(config, "model_type", ""))
    if loader is None:
        raise ModelUnavailableError(
            f"{_WHAT}: {model_id!r} is a {getattr(config, 'model_type', '?')} checkpoint; supported image-prompted "
            f"detectors: {', '.join(DETECTOR_LOADERS)} (e.g. google/owlv2-base-patch16-ensemble). OpenS2V's "
            "YOLO-World v2-L image-prompt detector needs the mmyolo stack, which does not install here."
        )
    return loader(model_id, settings)


def shared_nexus_detector(models: ModelRegistry, settings: Settings, model_id: str) -> ImagePromptedDetector:
    key = ("nexus-detector", model_id, settings.device, settings.dtype)
    return models.get(key, lambda: load_nexus_detector(model_id, settings))
