"""FaceScore (Liao et al. 2024, OPPO FaceScore) of the output: the raw reward-head output of the BLIP model of
`facescore_model` for each face, with the fixed text "A face."; several faces: their mean.

Recipe (METRICS.md; FaceScore's `get_reward`): faces by RetinaFace-MobileNet0.25 (or the packaged MTCNN
fallback, see `masc_ui.metrics.faces.detection`), kept when their score is >= 0.9; each box grown by 1 px as the
reference does (x0 = int(x0 - 1), y0 = int(y0 - 1), x1 = int(x1 + 1), y1 = int(y1 + 1), `int` truncating) and
clipped to the image (our choice: the reference would slice from the far side for a negative coordinate); the
crop resized to 224 on its short side (bicubic), centre-cropped to 224, CLIP-normalized; text "A face."
tokenized with BLIP's BERT tokenizer padded to 35 tokens; no ImageReward mean/std normalization. Empty crops
are skipped (as the reference). No kept face: NaN "no face found in the output".
Extras: `count`, `per_face` (scores, in detection order), `boxes` (grown boxes), `detector`.
Precision: the BLIP towers run in the precision policy's dtype (face crops cast to it); the reward head
(768-1024-128-64-16-1, 0.9 M parameters) always runs in float32, with the checkpoint's float32 weights, on the [CLS]
token, so the score is not a bfloat16 number (provenance params `float32_parts` in bfloat16/float16).
Per-face scores are cached by (image sha256, detector); faces of many images go through the model in batches.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from torchvision import transforms

from ...caching import LruCache
from ...imaging import InputImage, as_input_image
from ...models.loaded_models import ModelRegistry
from ...models.loading import load_pretrained, pick_device, pick_dtype
from ...models.nets.blip_reward import CONFIG_FILE, IMAGE_SIZE, MODEL_FILE, FaceScoreModel, load_reward_model
from ...models.precision import cast_model, float32_parts, precision_params
from ...models.profiles import ModelIds
from ...models.weight_files import resolve_weights_file
from ...settings import Settings
from ..backbone_scorer import BackboneScorer, Computed
from ..input_images import input_images
from ..sample import Sample
from .boxes import as_box
from .detection import DetectorChoice, FaceDetectionService, choose_detector, shared_face_detection
from .drawing import draw_faces
from .types import Face

FACE_TEXT = "A face."
TEXT_LENGTH = 35
MIN_FACE_SCORE = 0.9
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
BERT_TOKENIZER = "bert-base-uncased"
"""ImageReward's tokenizer (+ `[DEC]` as bos and `[ENC]`); used when the model folder holds no tokenizer files."""
BATCH_SIZE = 16
CACHE_SIZE = 4096

FACE_TRANSFORM = transforms.Compose(
    [
        transforms.Resize(IMAGE_SIZE, interpolation=transforms.InterpolationMode.BICUBIC),
        transforms.CenterCrop(IMAGE_SIZE),
        transforms.ToTensor(),
        transforms.Normalize(CLIP_MEAN, CLIP_STD),
    ]
)


@dataclass(frozen=True)
class FaceScoreInfo:
    model_id: str
    revision: str
    device: str
    dtype: torch.dtype
    tokenizer: str
    detector: dict[str, Any]
    float32_parts: tuple[str, ...] = ()
    """Parts kept in float32 whatever `dtype` is (the reward head)."""


def grown_box(face: Face, width: int, height: int) -> tuple[int, int, int, int]:
    """FaceScore's crop box: the detector's box grown by 1 px (int-truncated), clipped to the image."""
    x0, y0, x1, y1 = face.box
    return (
        min(max(int(x0 - 1), 0), width),
        min(max(int(y0 - 1), 0), height),
        min(max(int(x1 + 1), 0), width),
        min(max(int(y1 + 1), 0), height),
    )


class FaceScoreBackbone:
    """The reward model, its tokenized text, the shared detection service and the per-image score cache."""

    def __init__(
        self,
        model: FaceScoreModel,
        text: dict[str, torch.Tensor],
        detection: FaceDetectionService,
        choice: DetectorChoice,
        info: FaceScoreInfo,
        *,
        batch_size: int = BATCH_SIZE,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.model = model
        self.text = text
        self.detection = detection
        self.choice = choice
        self.info = info
        self.batch_size = batch_size
        self.cache: LruCache[tuple[list[float], list[list[int]]]] = LruCache(cache_size)
        self.forwards = 0
        """Face crops that went through the model (not the cached ones)."""
        self._count_lock = threading.Lock()

    def face_scores(self, images: Sequence[InputImage]) -> list[tuple[list[float], list[list[int]]]]:
        """Per image: (score per kept face, its grown box), both in detection order; cached per image."""
        found: dict[str, tuple[list[float], list[list[int]]]] = {}
        todo: dict[str, InputImage] = {}
        for img in images:
            if img.sha256 in found or img.sha256 in todo:
                continue
            cached = self.cache.get((img.sha256, self.detection.name))
            if cached is None:
                todo[img.sha256] = img
            else:
                found[img.sha256] = cached
        if todo:
            todo_images = list(todo.values())
            crops: list[torch.Tensor] = []
            owners: list[tuple[str, list[int]]] = []
            for img, det in zip(todo_images, self.detection.detect_many(todo_images)):
                found[img.sha256] = ([], [])
                rgb = img.pixels.convert("RGB")
                for face in det.faces:
                    box = grown_box(face, *rgb.size)
                    if face.score < MIN_FACE_SCORE or box[2] <= box[0] or box[3] <= box[1]:
                        continue
                    crops.append(FACE_TRANSFORM(rgb.crop(box)))
                    owners.append((img.sha256, list(box)))
            for (sha, grown), score in zip(owners, self._score(crops)):
                found[sha][0].append(float(score))
                found[sha][1].append(grown)
            for sha in todo:
                self.cache.put((sha, self.detection.name), found[sha])
        return [found[img.sha256] for img in images]

    @torch.inference_mode()
    def _score(self, crops: list[torch.Tensor]) -> np.ndarray:
        scores = []
        for start in range(0, len(crops), self.batch_size):
            batch = torch.stack(crops[start : start + self.batch_size]).to(self.info.device, self.info.dtype)
            n = len(batch)
            ids = self.text["input_ids"].expand(n, -1).to(self.info.device)
            mask = self.text["attention_mask"].expand(n, -1).to(self.info.device)
            scores.append(self.model(batch, ids, mask).float().cpu().numpy())
            with self._count_lock:
                self.forwards += n
        return np.concatenate(scores) if scores else np.zeros(0, np.float32)


def reward_files(
    ref: str,
    settings: Settings,
    *,
    filename: str = MODEL_FILE,
    setting: str = "facescore_model",
    what: str = "FaceScore",
) -> tuple[Path, Path]:
    """(model file `filename`, `med_config.json`) of a BLIP reward checkpoint `ref`: a folder, the model file itself
    (config beside it), or a HF repo. Errors name `what` and the env var of `setting`."""
    path = Path(ref).expanduser()

    def resolve(source: str, name: str, label: str) -> Path:
        return resolve_weights_file(
            source, filename=name, what=label, setting=setting, cache_dir=settings.resolved_cache_dir
        )

    if path.is_file():
        config = path.parent / CONFIG_FILE
        return path, resolve(str(config) if config.exists() else str(path.parent), CONFIG_FILE, f"{what} config")
    return resolve(ref, filename, f"{what} model"), resolve(ref, CONFIG_FILE, f"{what} config")


def load_tokenizer(model_dir: Path, *, what: str = "FaceScore") -> tuple[Any, str]:
    """BLIP's BERT tokenizer: the one saved in `model_dir` if any, else `bert-base-uncased`; with ImageReward's
    `[DEC]` (bos) and `[ENC]` special tokens added. Returns (tokenizer, where it came from)."""
    from transformers import AutoTokenizer

    has_own = (model_dir / "tokenizer.json").exists() or (model_dir / "vocab.txt").exists()
    source = str(model_dir) if has_own else BERT_TOKENIZER
    tokenizer = load_pretrained(AutoTokenizer, source, what=f"{what} text tokenizer (BERT, uncased)")
    if "[DEC]" not in tokenizer.get_vocab():
        tokenizer.add_special_tokens({"bos_token": "[DEC]"})
    if "[ENC]" not in tokenizer.get_vocab():
        tokenizer.add_special_tokens({"additional_special_tokens": ["[ENC]"]})
    return tokenizer, source


def tokenize_texts(tokenizer: Any, texts: list[str], vocab_size: int, *, what: str) -> dict[str, torch.Tensor]:
    """`texts` as (N, 35) input_ids / attention_mask (truncated and padded to 35, as ImageReward); an error naming
    `what` when the tokenizer's ids do not fit the model's word embeddings."""
    tokens = tokenizer(texts, padding="max_length", truncation=True, max_length=TEXT_LENGTH, return_tensors="pt")
    if int(tokens["input_ids"].max()) >= vocab_size:
        from ...errors import ModelUnavailableError

        raise ModelUnavailableError(
            f"{what}: the tokenizer gives ids up to {int(tokens['input_ids'].max())}, "
            f"beyond the model's {vocab_size} word embeddings; it is not the model's tokenizer"
        )
    return {"input_ids": tokens["input_ids"], "attention_mask": tokens["attention_mask"]}


def tokenize_face_text(tokenizer: Any, vocab_size: int) -> dict[str, torch.Tensor]:
    """ "A face." as (1, 35) input_ids / attention_mask (padded to 35, as ImageReward)."""
    return tokenize_texts(tokenizer, [FACE_TEXT], vocab_size, what="FaceScore")


def load_facescore_backbone(settings: Settings, models: ModelRegistry, ids: ModelIds) -> FaceScoreBackbone:
    from ...errors import InputError

    if not ids.facescore:
        raise InputError("FaceScore needs its checkpoint: set MASC_FACESCORE_MODEL")
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    model_file, config_file = reward_files(ids.facescore, settings)
    what = f"FaceScore checkpoint {model_file} (MASC_FACESCORE_MODEL)"
    model = cast_model(load_reward_model(model_file, config_file, what=what), device, dtype, float32_parts=("head",))
    tokenizer, source = load_tokenizer(model_file.parent)
    text = tokenize_face_text(tokenizer, model.sizes.text_config["vocab_size"])
    choice = choose_detector("facescore", settings, ids)
    detection = shared_face_detection(models, settings, choice, device)
    info = FaceScoreInfo(
        model_id=str(model_file),
        revision="local",
        device=device,
        dtype=dtype,
        tokenizer=source,
        detector=detection.describe(choice),
        float32_parts=tuple(float32_parts(model)),
    )
    return FaceScoreBackbone(model, text, detection, choice, info)


@dataclass
class FaceScoreExplanation:
    """What the Score tab shows for FaceScore: each kept face's box with its score."""

    value: float
    reason: str | None
    faces: list[tuple[list[int], float]]
    """(grown box x0, y0, x1, y1; score) per face."""
    image: Image.Image
    """The output with each scored face's box labelled with its FaceScore."""
    detector: str
    reference_detector: bool


class FaceScoreScorer(BackboneScorer):
    """FaceScore of each sample's output; see the module docstring."""

    MODEL_FIELDS = ("facescore",)

    def _load_backbone(self, ids: ModelIds) -> FaceScoreBackbone:
        key = ("facescore", ids.facescore, ids.retinaface, self.settings.device, self.settings.dtype)
        return self.models.get(key, lambda: load_facescore_backbone(self.settings, self.models, ids))

    def _compute(self, samples: list[Sample], backbone: FaceScoreBackbone) -> list[Computed]:
        outs = input_images([s.out_image for s in samples], ["output"] * len(samples))
        results: list[Computed] = []
        for scores, boxes in backbone.face_scores(outs):
            extras = {"count": len(scores), "per_face": scores, "boxes": boxes, "detector": backbone.detection.name}
            if not scores:
                results.append((float("nan"), "no face found in the output", extras))
            else:
                results.append((float(np.mean(scores)), None, extras))
        return results

    def _extra_provenance(self, info: FaceScoreInfo) -> dict[str, Any]:
        return {
            "text": FACE_TEXT,
            "text_length": TEXT_LENGTH,
            "tokenizer": info.tokenizer,
            "detector": info.detector,
            "min_face_score": MIN_FACE_SCORE,
            "preprocess": "box grown 1 px, clipped; resize short side 224 bicubic, centre crop 224, CLIP norm",
            "output": "raw head output (no ImageReward mean/std); several faces: mean",
            **precision_params(info.dtype, list(info.float32_parts)),
        }

    def explain(self, out: Any) -> FaceScoreExplanation:
        """FaceScore of `out` with the picture the Score tab shows (each face's box and score)."""
        value = self.score([Sample(refs=(), out=out)])[0]
        backbone = self.backbone()
        faces = list(zip(value.extras.get("boxes", []), value.extras.get("per_face", [])))
        drawn = draw_faces(
            as_input_image(out, name="output").pixels,
            [Face(box=as_box(box), score=score, landmarks=None) for box, score in faces],
            [f"{score:.3f}" for _, score in faces],
        )
        return FaceScoreExplanation(
            value=value.value,
            reason=value.reason,
            faces=faces,
            image=drawn,
            detector=backbone.detection.name,
            reference_detector=backbone.detection.detector.reference,
        )
