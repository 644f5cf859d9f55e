"""FaceSim (OpenS2V-Nexus `facesim_cur`) = max(0, cos(e(ref), e(out))) of CurricularFace IR-101 embeddings of
the largest face in each image; several references: the mean of the per-reference values.

Per image (METRICS.md): the largest face (box area) of the detector (SCRFD `buffalo_l`, det_size 320,
threshold 0.5, retry on the image padded by 25% with grey 128; or the packaged MTCNN fallback, see
`masc_ui.metrics.faces.detection`); its landmarks aligned to the ArcFace template with a least-squares
similarity to 224 (`norm_crop`, 5 points), resized to 112
(bilinear), RGB, (x / 255 - 0.5) / 0.5; the IR backbone's BatchNorm1d output, L2-normalized in float32.
When the output or a reference has no face: NaN, reason "no face found in <the output / reference i>".

A video output (METRICS.md "Subject-to-video", OpenS2V `get_facesim.py`): 32 frames (linspace), per frame
max(0, cos(reference face, frame face)), frames without a face and zero values dropped, mean of the rest, 0 when none
remain (`facesim_video.video_facesim`). The reference is each reference image in which a face is found (OpenS2V takes
the one image of the `man`/`woman` folders; an object reference has no face): several such references -> the mean of
their video FaceSims; NaN "no face found in any reference" when none has one. Extras: `per_frame` (per sampled frame,
the mean over the used references of max(0, cos); None where the frame has no face), `per_ref` (each used
reference's video FaceSim), `refs_used`, `n_with_face`, `n_used` (of the first used reference), `detector`.
Extras: `per_ref` (max(0, cos) per reference), `cos` (raw cosines), `faces` (boxes, landmarks, scores of every
face found, and which one was used), `detector`. Faces are detected once per (image, detector), embeddings
cached per (image, detector); recognizer forwards run in batches of `BATCH_SIZE` crops. The recognizer is a
`FaceRecognizer` (its crop and its embedding): `CurricularFace` here, ArcFace for FaceSim-Arc (`facesim_arc`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from PIL import Image

from ...errors import InputError, ModelUnavailableError
from ...imaging import FrameSampling, InputImage, as_input_image
from ...models.conv_layout import conv_input, in_conv_layout
from ...models.loaded_models import ModelRegistry
from ...models.loading import pick_device, pick_dtype
from ...models.nets.ir import RELEASED_FILE, IRBackbone, load_recognizer
from ...models.profiles import ModelIds
from ...models.weight_files import resolve_weights_file
from ...settings import Settings
from ..backbone_scorer import BackboneScorer, Computed
from ..embedding_cache import EmbeddingCache
from ..input_images import input_images
from ..sample import MetricValue, Sample
from ..video.facesim_video import FACESIM_FRAMES, video_facesim
from ..video.frames import value_provenance
from .alignment import aligned_face
from .detection import DetectorChoice, FaceDetectionService, choose_detector, shared_face_detection
from .drawing import draw_faces
from .types import Face, FaceDetections

BATCH_SIZE = 32
CACHE_SIZE = 4096
ALIGNMENT = (
    "largest face; least-squares similarity of its landmarks to the ArcFace template, warped to 224 "
    "(cv2.warpAffine bilinear, black border), resized to 112 (bilinear); RGB (x/255-0.5)/0.5"
)


class FaceRecognizer(Protocol):
    """What FaceSim needs of a face recognizer (CurricularFace here, ArcFace in `facesim_arc`)."""

    label: str
    """The architecture, for provenance."""
    alignment: str
    """How its crops are made, for provenance."""

    def crop(self, rgb: np.ndarray, face: Face, *, padded_retry: bool) -> np.ndarray:
        """(S, S, 3) uint8 RGB crop of `face` in `rgb` (H, W, 3) uint8, as the recognizer reads it; `padded_retry`:
        the face was found only on the image padded by SCRFD's retry."""
        ...

    def embed(self, crops: np.ndarray) -> np.ndarray:
        """(N, E) float32 raw embeddings of (N, S, S, 3) uint8 RGB crops (one batch)."""
        ...


class CurricularFace:
    """The IR-101 CurricularFace recognizer of OpenS2V's `facesim_cur` (see the module docstring)."""

    alignment = ALIGNMENT

    def __init__(self, model: IRBackbone, device: str, dtype: torch.dtype) -> None:
        self.model = model
        self.device = device
        self.dtype = dtype
        self.label = model.arch.label

    def crop(self, rgb: np.ndarray, face: Face, *, padded_retry: bool) -> np.ndarray:
        """`aligned_face` of the original image (OpenS2V crops it there, padded retry or not)."""
        if face.landmarks is None:
            raise InputError(f"FaceSim needs face landmarks; the detector gave none for the face at {face.box}")
        return aligned_face(rgb, face.landmarks)

    @torch.inference_mode()
    def embed(self, crops: np.ndarray) -> np.ndarray:
        emb = self.model(conv_input(face_tensor(crops), self.device, self.dtype)).float()
        out: np.ndarray = emb.cpu().numpy()
        return out


@dataclass(frozen=True)
class FaceSimInfo:
    model_id: str
    """The recognizer weights file."""
    revision: str
    device: str
    dtype: torch.dtype
    architecture: str
    detector: dict[str, Any]
    alignment: str = ALIGNMENT
    """How the recognizer's crops are made."""


class FaceSimBackbone:
    """A face recognizer + the shared face detection service; unit embeddings (E,) of each image's face."""

    def __init__(
        self,
        recognizer: FaceRecognizer,
        detection: FaceDetectionService,
        choice: DetectorChoice,
        info: FaceSimInfo,
        *,
        batch_size: int = BATCH_SIZE,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.recognizer = recognizer
        self.detection = detection
        self.choice = choice
        self.info = info
        self.batch_size = batch_size
        self.embedding_cache = EmbeddingCache(cache_size)
        self.forwards = 0
        """Face crops that went through the recognizer (not the cached ones)."""
        self._count_lock = threading.Lock()

    def faces(self, images: Sequence[InputImage]) -> list[FaceDetections]:
        return self.detection.detect_many(images)

    def embeddings(self, images: Sequence[InputImage]) -> list[np.ndarray | None]:
        """Per image: the (E,) float32 unit embedding of its largest face, or None when it has none."""
        detections = self.faces(images)
        with_face = [(i, d.largest) for i, d in enumerate(detections) if d.largest is not None]
        out: list[np.ndarray | None] = [None] * len(images)
        if with_face:
            keys = [(images[i].sha256, self.detection.name) for i, _ in with_face]
            items = [(images[i], detections[i]) for i, _ in with_face]
            vectors = self.embedding_cache.get_or_compute_many(keys, items, self._encode)
            for (i, _), vec in zip(with_face, vectors):
                out[i] = vec
        return out

    def aligned_crop(self, image: InputImage, face: Face, *, padded_retry: bool = False) -> np.ndarray:
        """(112, 112, 3) uint8 RGB crop of `face` as the recognizer sees it."""
        if face.landmarks is None:
            raise ModelUnavailableError(
                f"FaceSim aligns each face by its landmarks, and the {self.detection.name} face detector gives none; "
                "use a detector that gives 5 landmarks (scrfd, retinaface or mtcnn)"
            )
        return self.recognizer.crop(np.asarray(image.pixels.convert("RGB")), face, padded_retry=padded_retry)

    def _encode(self, items: list[tuple[InputImage, FaceDetections]]) -> np.ndarray:
        crops = []
        for img, det in items:
            assert det.largest is not None  # `embeddings` passes images with a face only
            crops.append(self.aligned_crop(img, det.largest, padded_retry=det.padded_retry))
        chunks = []
        for start in range(0, len(crops), self.batch_size):
            emb = self.recognizer.embed(np.stack(crops[start : start + self.batch_size])).astype(np.float32)
            chunks.append(emb / np.linalg.norm(emb, axis=-1, keepdims=True))
            with self._count_lock:
                self.forwards += len(emb)
        return np.concatenate(chunks)


def face_tensor(crops: np.ndarray) -> torch.Tensor:
    """(N, 112, 112, 3) uint8 RGB -> (N, 3, 112, 112) float32 (x / 255 - 0.5) / 0.5."""
    x = torch.from_numpy(np.ascontiguousarray(crops)).permute(0, 3, 1, 2).float()
    return (x / 255.0 - 0.5) / 0.5


def load_facesim_backbone(settings: Settings, models: ModelRegistry, ids: ModelIds) -> FaceSimBackbone:
    if not ids.face_recognizer:
        raise InputError("FaceSim needs face recognizer weights: set MASC_FACE_RECOGNIZER")
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    path = resolve_weights_file(
        ids.face_recognizer,
        filename=RELEASED_FILE,
        what="FaceSim face recognizer",
        setting="face_recognizer",
        cache_dir=settings.resolved_cache_dir,
    )
    model = load_recognizer(path).to(device, dtype)
    in_conv_layout(model, device)  # in place
    recognizer = CurricularFace(model, device, dtype)
    choice = choose_detector("facesim", settings, ids)
    detection = shared_face_detection(models, settings, choice, device)
    info = FaceSimInfo(
        model_id=str(path),
        revision="local",
        device=device,
        dtype=dtype,
        architecture=recognizer.label,
        detector=detection.describe(choice),
    )
    return FaceSimBackbone(recognizer, detection, choice, info)


@dataclass
class FaceSimExplanation:
    """What the Score tab shows for FaceSim: both images with their faces drawn, the two aligned crops."""

    value: float
    reason: str | None
    out_image: Image.Image
    ref_image: Image.Image
    out_crop: Image.Image | None
    """112x112 RGB crop the recognizer read (None when no face)."""
    ref_crop: Image.Image | None
    detector: str
    reference_detector: bool


VIDEO_AGGREGATE = (
    "OpenS2V get_facesim: per frame max(0, cos), frames without a face and zeros dropped, mean "
    "(0 when none); references with a face: mean"
)


class FaceSimScorer(BackboneScorer):
    """FaceSim of the output against each reference; see the module docstring."""

    MODEL_FIELDS = ("face_recognizer",)
    VIDEO_FRAME_RULE = FACESIM_FRAMES
    VIDEO_AGGREGATE = VIDEO_AGGREGATE
    VIDEO_DROPS_ZEROS = True
    """Whether a video's frames whose max(0, cos) is 0 leave its mean (OpenS2V: for CurricularFace, yes)."""

    def score_videos(
        self, samples: Sequence[Sample], frames: Sequence[Sequence[InputImage]], samplings: Sequence[FrameSampling]
    ) -> list[MetricValue]:
        """FaceSim of each video sample (its 32 sampled `frames`, `samplings[i]` = how they were sampled), by the
        module docstring's video rule. The references and frames of all samples go through detection and the
        recognizer together; a reference (or frame) seen before comes from the embedding cache."""
        backbone = self.backbone()
        base = self.provenance()
        refs = [input_images(s.refs, [f"reference {j + 1}" for j in range(len(s.refs))]) for s in samples]
        everything = [img for rs in refs for img in rs] + [img for fs in frames for img in fs]
        vectors = _with_face(everything, backbone.embeddings(everything))
        values = []
        for rs, fs, sampling in zip(refs, frames, samplings):
            provenance = value_provenance(self, self.settings, base, int(sampling["frame_count"]))
            used = [j for j, r in enumerate(rs) if r.sha256 in vectors]
            extras: dict[str, Any] = {
                "detector": backbone.detection.name,
                "frames": dict(sampling),
                "refs_used": [j + 1 for j in used],
            }
            if not used:
                values.append(
                    MetricValue(self.spec.name, float("nan"), "no face found in any reference", extras, provenance)
                )
                continue
            per_ref, per_frame_ref, details = [], [], []
            for j in used:
                ref = vectors[rs[j].sha256]
                cosines = [float(np.dot(ref, vectors[f.sha256])) if f.sha256 in vectors else None for f in fs]
                value, detail = video_facesim(cosines, drop_zeros=self.VIDEO_DROPS_ZEROS)
                per_ref.append(value)
                per_frame_ref.append(detail["per_frame"])
                details.append(detail)
            first = details[0]
            per_frame = [None if col[0] is None else float(np.mean(col)) for col in zip(*per_frame_ref)]
            extras.update(
                per_frame=per_frame,
                per_ref=per_ref,
                n_frames=first["n_frames"],
                n_with_face=first["n_with_face"],
                n_used=first["n_used"],
            )
            values.append(MetricValue(self.spec.name, float(np.mean(per_ref)), None, extras, provenance))
        return values

    def _load_backbone(self, ids: ModelIds) -> FaceSimBackbone:
        key = ("facesim", ids.face_recognizer, ids.face_detector_dir, self.settings.device, self.settings.dtype)
        return self.models.get(key, lambda: load_facesim_backbone(self.settings, self.models, ids))

    def _compute(self, samples: list[Sample], backbone: FaceSimBackbone) -> list[Computed]:
        flat = [(s.out_image, "output") for s in samples] + [
            (r, f"reference {j + 1}") for s in samples for j, r in enumerate(s.refs)
        ]
        images = input_images([f[0] for f in flat], [f[1] for f in flat])
        outs, rest = images[: len(samples)], iter(images[len(samples) :])
        refs = [[next(rest) for _ in s.refs] for s in samples]
        vectors = _with_face(images, backbone.embeddings(images))
        detections = dict(zip((img.sha256 for img in images), backbone.faces(images)))
        results: list[Computed] = []
        for out, rs in zip(outs, refs):
            missing = [
                name
                for name, img in [("the output", out)] + [(f"reference {j + 1}", r) for j, r in enumerate(rs)]
                if img.sha256 not in vectors
            ]
            extras: dict[str, Any] = {
                "detector": backbone.detection.name,
                "faces": {
                    "out": _faces_json(detections[out.sha256]),
                    "refs": [_faces_json(detections[r.sha256]) for r in rs],
                },
            }
            if missing:
                results.append((float("nan"), f"no face found in {' and '.join(missing)}", extras))
                continue
            cos = [float(np.dot(vectors[r.sha256], vectors[out.sha256])) for r in rs]
            per_ref = [max(0.0, c) for c in cos]
            extras.update(per_ref=per_ref, cos=cos)
            results.append((float(np.mean(per_ref)), None, extras))
        return results

    def _extra_provenance(self, info: FaceSimInfo) -> dict[str, Any]:
        return {
            "architecture": info.architecture,
            "detector": info.detector,
            "alignment": info.alignment,
            "similarity": "max(0, cos) of L2-normalized BatchNorm1d embeddings; several references: mean",
        }

    def explain(self, out: Any, ref: Any) -> FaceSimExplanation:
        """FaceSim of `out` against one reference `ref` with the pictures the Score tab shows."""
        backbone = self.backbone()
        value = self.score([Sample(refs=(ref,), out=out)])[0]
        out_img, ref_img = as_input_image(out, name="output"), as_input_image(ref, name="reference")
        out_det, ref_det = backbone.faces([out_img, ref_img])

        def crop(img: InputImage, det: FaceDetections) -> Image.Image | None:
            face = det.largest
            if face is None:
                return None
            return Image.fromarray(backbone.aligned_crop(img, face, padded_retry=det.padded_retry))

        return FaceSimExplanation(
            value=value.value,
            reason=value.reason,
            out_image=draw_faces(out_img.pixels, out_det.faces),
            ref_image=draw_faces(ref_img.pixels, ref_det.faces),
            out_crop=crop(out_img, out_det),
            ref_crop=crop(ref_img, ref_det),
            detector=backbone.detection.name,
            reference_detector=backbone.detection.detector.reference,
        )


def _with_face(images: Sequence[InputImage], vectors: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
    """sha256 -> face embedding of the `images` that have one (`vectors[i]` is None for an image without a face)."""
    return {img.sha256: vec for img, vec in zip(images, vectors) if vec is not None}


def _faces_json(detections: FaceDetections) -> dict[str, Any]:
    data = detections.to_json()
    largest = detections.largest
    data["used"] = None if largest is None else detections.faces.index(largest)
    return data
