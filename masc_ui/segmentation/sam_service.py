"""Interactive Segment Anything: clicks and boxes -> masks, with one image-encoder pass per image.

`SamService` owns one loaded SAM (shared through a `ModelRegistry` when given) and an LRU cache of image
embeddings keyed by `InputImage.sha256` (the image's one content hash, see `masc_ui.imaging`): the first prompt on an image runs the heavy image encoder, every further
prompt on the same image (another click, a box, a refinement, an undo = the same prompts minus the last one)
runs only the prompt encoder and the mask decoder. Safe to share between threads (web app sessions).

`encode_in_background(image)` starts that image-encoder pass as soon as an image is uploaded or opened, on the
service's one worker thread (once per image, cancellable), so the first click usually finds the embedding
ready. The image encoder runs in the precision of the policy (`models.precision`: bfloat16 where the hardware
computes it fast) with fused attention (`sam_attention`); the prompt encoder and the mask decoder, which are
cheap, stay in float32.

Coordinates are XY pixels of the original image (see `prompts`), masks are bool (H, W) at the image's size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from segment_anything.modeling import Sam
from segment_anything.utils.transforms import ResizeLongestSide

from ..caching import CacheInfo, LruCache
from ..errors import InputError
from ..imaging import InputImage, as_input_image
from ..models.loaded_models import ModelRegistry
from ..models.loading import pick_device
from ..models.nets.sam_variants import build_sam, sam_architecture
from ..models.precision import precision_policy
from ..settings import Settings
from .prompts import Box, Point, check_box, check_low_res_logits, check_points
from .sam_attention import use_sdpa_attention
from .sam_background import EncodeCancelled, ImageEmbedding, PreEncode, encode_cancellable
from .sam_checkpoints import resolve_checkpoint


@dataclass(frozen=True)
class SamPrediction:
    """Masks for one prompt set."""

    masks: list[np.ndarray]
    """bool (H, W) masks at the image's size; 3 candidates with multimask output, else 1."""
    scores: list[float]
    """SAM's predicted mask quality (IoU estimate) of each mask, same order."""
    best: int
    """Index of the highest-scoring mask."""
    low_res_logits: np.ndarray = field(repr=False)
    """float32 (len(masks), L, L) mask logits before upsampling (L=256 for the official models); pass
    `best_low_res_logits` back as `prev_low_res_logits` to refine with more clicks."""

    @property
    def mask(self) -> np.ndarray:
        """The best mask, bool (H, W)."""
        return self.masks[self.best]

    @property
    def score(self) -> float:
        return self.scores[self.best]

    @property
    def best_low_res_logits(self) -> np.ndarray:
        """float32 (1, L, L): the best mask's logits, the `prev_low_res_logits` of the next click."""
        return self.low_res_logits[self.best : self.best + 1]


class SamService:
    """One Segment Anything model plus a per-image embedding cache.

    Args:
        variant: `vit_b`, `vit_l`, `vit_h` (official) or `vit_tiny` (offline demo weights).
        checkpoint: local state-dict file; None = the official file for `variant`, downloaded into `cache_dir`
            on first use (with a progress bar and a SHA-256 check).
        device: `auto` (cuda > mps > cpu) or a torch device string.
        dtype: precision of the image encoder: `auto` (the policy of `models.precision`: bfloat16 where the hardware
            computes it fast, float32 elsewhere), `float32` (exact: the official SamPredictor's numbers),
            `bfloat16`, `float16`. The prompt encoder and mask decoder always run in float32.
        cache_dir: download folder for official checkpoints (default `~/.cache/masc-ui/checkpoints`).
        cache_size: how many image embeddings to keep (least recently used ones are dropped first).
        models: registry that owns the loaded model (shared with other services); None = this service owns it.
        model: an already built SAM of `variant` to use instead of loading `checkpoint` (e.g. random weights
            in a benchmark); it is moved to `device` and its image encoder cast to the precision (in place).

    The model is loaded on first use (`model`, `embed`, `predict`), not at construction.
    """

    def __init__(
        self,
        variant: str,
        checkpoint: str | Path | None = None,
        device: str | None = "auto",
        cache_dir: str | Path | None = None,
        cache_size: int = 8,
        *,
        models: ModelRegistry | None = None,
        progress: bool = True,
        model: Sam | None = None,
        dtype: str | torch.dtype | None = "auto",
    ) -> None:
        self.variant = variant
        self.architecture = sam_architecture(variant)
        self.checkpoint = None if checkpoint is None else Path(checkpoint).expanduser()
        self.device = pick_device(device)
        self.precision = precision_policy(dtype, self.device)
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else Settings().resolved_cache_dir
        if cache_size < 1:
            raise InputError(f"cache_size must be >= 1, got {cache_size}")
        self._cache: LruCache[ImageEmbedding] = LruCache(cache_size)
        self._models = models if models is not None else ModelRegistry()
        self._progress = progress
        self._transform = ResizeLongestSide(self.architecture.image_size)
        self._given = model
        self._jobs: dict[Hashable, PreEncode] = {}
        self._jobs_lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None

    # --- model ------------------------------------------------------------------------------------------------

    @property
    def model(self) -> Sam:
        """The loaded SAM (eval mode, on `device`); loads it the first time (downloading if needed)."""
        if self._given is not None:
            key = ("sam", self.variant, f"given model {id(self._given):x}", self.device, self.precision.name)
            return self._models.get(key, lambda: self._placed(self._given))
        key = ("sam", self.variant, str(self.checkpoint) if self.checkpoint else None, self.device, self.precision.name)
        return self._models.get(key, self._load)

    def _load(self) -> Sam:
        path = resolve_checkpoint(self.variant, self.checkpoint, self.cache_dir, progress=self._progress)
        return self._placed(build_sam(self.variant, path))

    def _placed(self, sam: Sam) -> Sam:
        """`sam` in eval mode on the device, its image encoder in the policy's precision, with fused attention
        (`sam_attention`: the same function, faster)."""
        sam = sam.eval().to(self.device)
        sam.image_encoder.to(self.precision.dtype)
        use_sdpa_attention(sam.image_encoder)
        return sam

    @property
    def provenance(self) -> dict[str, Any]:
        """What produced the masks, for stored mask records (`dtype`: the image encoder's precision)."""
        source = (
            "caller-built model"
            if self._given is not None
            else str(self.checkpoint)
            if self.checkpoint
            else f"official {self.variant} checkpoint"
        )
        return {
            "model": "segment-anything",
            "variant": self.variant,
            "checkpoint": source,
            "device": self.device,
            "dtype": self.precision.name,
        }

    # --- embeddings -------------------------------------------------------------------------------------------

    def embed(self, image: InputImage | Image.Image | np.ndarray) -> ImageEmbedding:
        """The image's embedding, from the cache or by running the image encoder once (call it on upload to
        make the first click fast). `image`: see `predict`."""
        return self._embed(as_input_image(image, name="image"))

    def _embed(self, image: InputImage) -> ImageEmbedding:
        return self._cache.get_or_compute(image.sha256, lambda: self._encode(image.pixels))

    def _encode(self, rgb: Image.Image, cancel: threading.Event | None = None) -> ImageEmbedding:
        """Run the image encoder on `rgb` (in the policy's precision); with `cancel`, block by block, stopping with
        `EncodeCancelled` as soon as the event is set."""
        sam = self.model
        pixels = np.asarray(rgb, dtype=np.uint8)
        resized = self._transform.apply_image(pixels)
        tensor = torch.as_tensor(resized, device=self.device).permute(2, 0, 1).contiguous()[None]
        with torch.inference_mode():
            x = sam.preprocess(tensor).to(self.precision.dtype)
            features = sam.image_encoder(x) if cancel is None else encode_cancellable(sam.image_encoder, x, cancel)
        return ImageEmbedding(features.float(), tuple(resized.shape[:2]), tuple(pixels.shape[:2]))

    # --- background encoding ----------------------------------------------------------------------------------

    def encode_in_background(self, image: InputImage | Image.Image | np.ndarray) -> PreEncode:
        """Start encoding `image` on the service's worker thread and return at once (call it when an image is
        uploaded or opened, so that the first click finds the embedding ready). `image`: see `predict`.

        Once per image: an image already cached gives a finished job, one already being encoded gives that job.
        Jobs run one at a time, in order.
        """
        img = as_input_image(image, name="image")
        key: Hashable = img.sha256
        pixels: Callable[[], Image.Image] = lambda: img.pixels  # noqa: E731
        with self._jobs_lock:
            running = self._jobs.get(key)
            if running is not None and not running.done():
                return running
            event = threading.Event()
            cached = self._cache.get(key) if key in self._cache else None
            if cached is not None:
                future: Future = Future()
                future.set_result(cached)
                return PreEncode(key, future, event)
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sam-{self.variant}-encoder")
            future = self._worker.submit(self._run_job, key, pixels, event)
            job = self._jobs[key] = PreEncode(key, future, event)
        future.add_done_callback(lambda _: self._forget(key, job))
        return job

    def _run_job(self, key: Hashable, pixels: Callable[[], Image.Image], event: threading.Event) -> ImageEmbedding:
        if event.is_set():
            raise EncodeCancelled("cancelled before it started")
        return self._cache.get_or_compute(key, lambda: self._encode(pixels(), event))

    def _forget(self, key: Hashable, job: PreEncode) -> None:
        with self._jobs_lock:
            if self._jobs.get(key) is job:
                del self._jobs[key]

    def cancel_background(self) -> None:
        """Cancel every background encoding not finished yet (e.g. when the user leaves the page)."""
        with self._jobs_lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.cancel()

    def close(self) -> None:
        """Cancel the background encodings and stop the worker thread (the cache and the model stay usable)."""
        self.cancel_background()
        with self._jobs_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True, cancel_futures=True)

    def cache_info(self) -> CacheInfo:
        return self._cache.info()

    def clear_cache(self) -> None:
        self._cache.clear()

    # --- prompts -> masks -------------------------------------------------------------------------------------

    def predict(
        self,
        image: InputImage | Image.Image | np.ndarray,
        points: Sequence[Point] = (),
        box: Box | None = None,
        multimask: bool = True,
        prev_low_res_logits: np.ndarray | None = None,
    ) -> SamPrediction:
        """Masks for `points` and/or `box` on `image`.

        Args:
            image: an `InputImage` (decoded once at the edge; its `sha256` keys the embedding cache, so nothing
                is decoded or hashed again per click), or a PIL image / HxWx3 uint8 array (converted with
                `as_input_image`, i.e. hashed as a PNG of its pixels on every call).
            points: (x, y, label) in pixels, label 1 = subject, 0 = background.
            box: (x0, y0, x1, y1) in pixels (left, top, right, bottom).
            multimask: return SAM's 3 candidate masks (best for a single ambiguous click) instead of 1.
            prev_low_res_logits: (1, L, L) or (L, L) logits of the previous prediction on this image
                (`SamPrediction.best_low_res_logits`), to refine it with the new prompts.

        Raises `InputError` for points outside the image, bad labels, inverted/outside boxes, missing prompts
        or wrongly shaped logits.
        """
        img = as_input_image(image, name="image")
        size = img.size
        pts = check_points(points, size)
        xyxy = check_box(box, size)
        if pts is None and xyxy is None:
            raise InputError("give at least one point (x, y, label) or a box (x0, y0, x1, y1) to segment")
        mask_input = (
            None
            if prev_low_res_logits is None
            else check_low_res_logits(prev_low_res_logits, self.architecture.low_res_size)
        )
        return self._decode(self._embed(img), pts, xyxy, mask_input, multimask)

    def _decode(
        self,
        emb: ImageEmbedding,
        pts: tuple[np.ndarray, np.ndarray] | None,
        xyxy: np.ndarray | None,
        mask_input: np.ndarray | None,
        multimask: bool,
    ) -> SamPrediction:
        sam, dev = self.model, self.device
        points = boxes = masks = None
        if pts is not None:
            coords = self._transform.apply_coords(pts[0], emb.original_size)
            points = (
                torch.as_tensor(coords, dtype=torch.float, device=dev)[None],
                torch.as_tensor(pts[1], dtype=torch.int, device=dev)[None],
            )
        if xyxy is not None:
            boxes = torch.as_tensor(self._transform.apply_boxes(xyxy, emb.original_size), dtype=torch.float, device=dev)
        if mask_input is not None:
            masks = torch.as_tensor(mask_input, dtype=torch.float, device=dev)[None]
        with torch.inference_mode():
            sparse, dense = sam.prompt_encoder(points=points, boxes=boxes, masks=masks)
            low_res, quality = sam.mask_decoder(
                image_embeddings=emb.features,
                image_pe=sam.prompt_encoder.get_dense_pe(),
                sparse_prompt_embeddings=sparse,
                dense_prompt_embeddings=dense,
                multimask_output=multimask,
            )
            upscaled = sam.postprocess_masks(low_res, emb.input_size, emb.original_size)
            binary = (upscaled > sam.mask_threshold)[0].cpu().numpy()
        scores = [float(s) for s in quality[0].float().cpu()]
        return SamPrediction(
            masks=[np.ascontiguousarray(m) for m in binary],
            scores=scores,
            best=int(np.argmax(scores)),
            low_res_logits=low_res[0].float().cpu().numpy(),
        )
