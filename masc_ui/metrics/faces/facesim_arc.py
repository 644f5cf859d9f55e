"""FaceSim-Arc (OpenS2V-Nexus `facesim_arc`) = max(0, cos(e(ref), e(out))) of ArcFace embeddings (insightface
`buffalo_l` `w600k_r50.onnx`, run by `masc_ui.metrics.faces.arcface`) of the largest face in each image; several
references: the mean of the per-reference values. FaceSim's scorer with its recognizer swapped:

- the same face detection (SCRFD of the same `buffalo_l` folder, `MASC_FACE_DETECTOR_DIR`, or the packaged MTCNN
  fallback: one shared detection service, so FaceSim and FaceSim-Arc detect each image once between them) and the
  same largest face;
- insightface's crop for ArcFace: the 5 landmarks aligned straight to 112 (FaceSim's CurricularFace goes through 224),
  in the padded image when the face was found only there (see `arcface`);
- NaN "no face found in ..." as FaceSim; extras as FaceSim (`per_ref`, `cos`, `faces`, `detector`).

A video output: FaceSim's video rule (32 frames, linspace; per frame max(0, cos); frames without a face dropped; 0 when
none has one) except that frames whose max(0, cos) is 0 stay in the mean, as OpenS2V's ArcFace loop does (its zero
test reads `if arc_scores != 0.0`, the list, so it keeps every frame with a face; its CurricularFace loop drops zeros).
The recognizer is an ONNX graph run by onnxruntime in float32 whatever the precision policy (provenance dtype float32).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ...errors import InputError
from ...models.loaded_models import ModelRegistry
from ...models.loading import pick_device
from ...models.profiles import ModelIds
from ...settings import Settings
from .arcface import ALIGNMENT, ArcFaceOnnx, find_pack_recognizer
from .detection import choose_detector, shared_face_detection
from .facesim import FaceSimBackbone, FaceSimInfo, FaceSimScorer

VIDEO_AGGREGATE = (
    "OpenS2V get_facesim (facesim_arc): per frame max(0, cos), frames without a face dropped, zeros kept, mean "
    "(0 when none); references with a face: mean"
)


def load_arcface_backbone(settings: Settings, models: ModelRegistry, ids: ModelIds) -> FaceSimBackbone:
    if not ids.arcface:
        raise InputError("FaceSim-Arc needs insightface's buffalo_l folder: set MASC_FACE_DETECTOR_DIR")
    device = pick_device(settings.device)
    path = find_pack_recognizer(Path(ids.arcface).expanduser())
    recognizer = ArcFaceOnnx(path, device=device)
    choice = choose_detector("facesim", settings, ids)
    detection = shared_face_detection(models, settings, choice, device)
    info = FaceSimInfo(
        model_id=str(path),
        revision="local",
        device=device,
        dtype=torch.float32,
        architecture=recognizer.label,
        detector=detection.describe(choice),
        alignment=ALIGNMENT,
    )
    return FaceSimBackbone(recognizer, detection, choice, info)


class ArcFaceSimScorer(FaceSimScorer):
    """FaceSim-Arc of the output against each reference; see the module docstring."""

    MODEL_FIELDS = ("arcface",)
    VIDEO_AGGREGATE = VIDEO_AGGREGATE
    VIDEO_DROPS_ZEROS = False

    def _load_backbone(self, ids: ModelIds) -> FaceSimBackbone:
        key = ("facesim_arc", ids.arcface, ids.face_detector_dir, self.settings.device)
        backbone: FaceSimBackbone = self.models.get(key, lambda: load_arcface_backbone(self.settings, self.models, ids))
        return backbone

    def _extra_provenance(self, info: FaceSimInfo) -> dict[str, Any]:
        return {
            **super()._extra_provenance(info),
            "similarity": "max(0, cos) of L2-normalized ArcFace embeddings; several references: mean",
            "runtime": "onnxruntime, float32 (the dtype setting does not apply)",
        }
