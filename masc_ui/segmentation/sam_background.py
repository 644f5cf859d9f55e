"""What `SamService.encode_in_background` hands back (an `ImageEmbedding`, wrapped in a `PreEncode`), and the image
encoder run so that it can be cancelled."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class ImageEmbedding:
    """SAM's encoding of one image."""

    features: torch.Tensor = field(repr=False)
    """Image embedding, float32 (1, C, E, E) on the model's device (C=256, E=64 for the official models), whatever
    precision the encoder ran in."""
    input_size: tuple[int, int]
    """(H, W) of the image after resizing its longest side to the model's input size, before padding."""
    original_size: tuple[int, int]
    """(H, W) of the original image."""


class EncodeCancelled(Exception):
    """A background encoding was cancelled before it finished (nothing was cached)."""


class PreEncode:
    """One image's background encoding (`SamService.encode_in_background`): poll it, wait for it, or cancel it.

    A click on the image while it runs waits for it instead of encoding the image a second time; a cancelled
    encoding stops before its next transformer block and caches nothing (a later click encodes the image
    itself).
    """

    def __init__(self, key: Hashable, future: Future, cancel_event: threading.Event) -> None:
        self.key = key
        self._future = future
        self._cancel = cancel_event

    def done(self) -> bool:
        """Finished: encoded, found in the cache, cancelled or failed."""
        return self._future.done()

    def cancel(self) -> None:
        """Stop it: a job not started never runs, a running one stops before its next encoder block."""
        self._cancel.set()
        self._future.cancel()

    def cancelled(self) -> bool:
        """True when `cancel()` stopped it before it finished (False when it had finished already)."""
        if self._future.cancelled():
            return True
        return self._future.done() and isinstance(self._future.exception(), EncodeCancelled)

    def result(self, timeout: float | None = None) -> ImageEmbedding | None:
        """Wait (at most `timeout` seconds; None = as long as it takes) and return the embedding; None when it was
        cancelled. Re-raises what the encoding raised (e.g. `ModelUnavailableError`); `TimeoutError` on timeout."""
        try:
            return self._future.result(timeout)
        except (CancelledError, EncodeCancelled):
            return None


def encode_cancellable(encoder: torch.nn.Module, x: torch.Tensor, cancel: threading.Event) -> torch.Tensor:
    """`ImageEncoderViT.forward` (patch embedding, position embedding, blocks, neck), checking `cancel` before
    every block: the same operations in the same order, so the same numbers as `encoder(x)`."""
    x = encoder.patch_embed(x)
    if encoder.pos_embed is not None:
        x = x + encoder.pos_embed
    for block in encoder.blocks:
        if cancel.is_set():
            raise EncodeCancelled("cancelled while encoding")
        x = block(x)
    if cancel.is_set():
        raise EncodeCancelled("cancelled while encoding")
    return encoder.neck(x.permute(0, 3, 1, 2))
