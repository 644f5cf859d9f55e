"""Batched, cached scoring of (image, text) pairs: the engine under VQAScore and ITMScore.

Two caches, both owned by the engine (one engine per loaded model, shared by every scorer through the model
registry) and keyed by the image's content hash (`InputImage.sha256`):

- image features: each distinct image goes through the image encoder once; N prompts of one image cost one
  image encoding (`image_encodings` counts images encoded);
- results: a (image, text) pair already scored is returned from memory; a rerun costs no forward at all
  (`pair_forwards` counts pairs through the text / language-model part, `batch_forwards` its batched calls;
  subclasses report both through `count_images` and `count_forward`).

Pairs whose image is not yet encoded are grouped: the missing images are encoded together (in `batch_size`
chunks), then the pairs go through the text part in padded batches of `batch_size`.
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...caching import LruCache
from ...imaging import InputImage


@dataclass(frozen=True)
class PairScore:
    """One pair's value (NaN with `reason` when it cannot be scored) and its JSON-able extras."""

    value: float
    reason: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineInfo:
    """What every value scored by an engine records: the checkpoint and how it ran (`params` go into the
    provenance's params: the family, template, answer token, preprocessing, ...)."""

    model_id: str
    revision: str
    device: str
    dtype: Any
    """A torch dtype."""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Refusal:
    """An image the model cannot take (kept in the feature cache in place of its features), with the reason."""

    reason: str


def nan_score(reason: str, extras: dict[str, Any] | None = None) -> PairScore:
    return PairScore(math.nan, reason, extras or {})


class PairEngine(ABC):
    """Subclasses implement `encode_images(images) -> list[features | Refusal]` and
    `score_batch(images, features, texts) -> list[PairScore]` (one padded forward of the text part)."""

    def __init__(
        self, info: EngineInfo, *, batch_size: int, image_cache_size: int, result_cache_size: int = 65536
    ) -> None:
        self.info = info
        self.batch_size = batch_size
        self.image_cache: LruCache[Any] = LruCache(image_cache_size)
        self.result_cache: LruCache[PairScore] = LruCache(result_cache_size)
        self.image_encodings = 0
        self.pair_forwards = 0
        self.batch_forwards = 0
        self._count_lock = threading.Lock()

    def score(self, images: Sequence[InputImage], texts: Sequence[str]) -> list[PairScore]:
        """One `PairScore` per (images[i], texts[i]), in order."""
        if len(images) != len(texts):
            raise ValueError(f"{len(images)} images for {len(texts)} texts")
        keys = [(image.sha256, text) for image, text in zip(images, texts)]
        return self.result_cache.get_many_or_compute(keys, list(zip(images, texts)), self._score_missing)

    def clear_caches(self) -> None:
        self.image_cache.clear()
        self.result_cache.clear()

    @abstractmethod
    def encode_images(self, images: list[InputImage]) -> list[Any]:
        """Per image, what `score_batch` needs of it (e.g. (P, D) tokens), or a `Refusal`."""

    @abstractmethod
    def score_batch(self, images: list[InputImage], features: list[Any], texts: list[str]) -> list[PairScore]:
        """Scores of the pairs (images[i] with features[i], texts[i]) in one padded forward."""

    def _score_missing(self, pairs: list[tuple[InputImage, str]]) -> list[PairScore]:
        images = [image for image, _ in pairs]
        features = self.image_cache.get_many_or_compute(
            [image.sha256 for image in images], images, self._encode_counted
        )
        results: list[PairScore | None] = [None] * len(pairs)
        ready = []
        for i, feature in enumerate(features):
            if isinstance(feature, Refusal):
                results[i] = nan_score(feature.reason)
            else:
                ready.append(i)
        for start in range(0, len(ready), self.batch_size):
            batch = ready[start : start + self.batch_size]
            scores = self.score_batch(
                [images[i] for i in batch], [features[i] for i in batch], [pairs[i][1] for i in batch]
            )
            for i, score in zip(batch, scores):
                results[i] = score
        return [r for r in results if r is not None]

    def _encode_counted(self, images: list[InputImage]) -> list[Any]:
        out: list[Any] = []
        for start in range(0, len(images), self.batch_size):
            out += self.encode_images(images[start : start + self.batch_size])
        return out

    def count_images(self, images: int) -> None:
        """Called by subclasses each time `images` images go through the image encoder."""
        with self._count_lock:
            self.image_encodings += images

    def count_forward(self, pairs: int) -> None:
        """Called by `score_batch` for each batched forward of the text part, with the pairs it held."""
        with self._count_lock:
            self.batch_forwards += 1
            self.pair_forwards += pairs
