"""GmeScore (OpenS2V-Nexus): text-video relevance = mean over 32 evenly sampled frames of the cosine between the
GME embedding of the prompt (as a query: "Find an image that matches the given text.") and the GME embedding of
each frame (as a document: "You are a helpful assistant."). Range [-1, 1], higher is better. See
`masc_ui.metrics.video.gme` for the embedding recipe and its one difference from the release (M-RoPE positions).

Frames: `numpy.linspace(0, T - 1, 32, dtype=int)` over the T decoded frames (repeats kept when T < 32, as OpenS2V).
Extras: `per_frame` (the 32 cosines, in frame order), `prompt_text`, and `frames` (the sampling).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ...imaging import FrameRule, VideoFrame
from ...models.auto_profile import effective_model_ids, ensure_demo_checkpoints
from .gme import GME_QUERY_INSTRUCTION, GmeEmbedder, batched, gme_info_fields, shared_gme
from .sample import VideoNeeds, VideoSample
from .scorer import Computed, VideoScorer

GME_FRAMES = FrameRule("linspace", 32)


def gme_score(embedder: GmeEmbedder, frames: Iterable[object], prompt: str) -> tuple[float, list[float]]:
    """(mean cosine, per-frame cosines) of `prompt` against each frame (`InputImage`s or anything `as_input_image`
    takes). Frames are embedded in batches as they arrive, so an iterator that decodes in the background overlaps
    decoding with the model."""
    text = embedder.text_embeddings([prompt], GME_QUERY_INSTRUCTION)[0]
    per_frame: list[float] = []
    for batch in batched(frames, embedder.batch_size):
        per_frame += [float(c) for c in embedder.image_embeddings(batch) @ text]
    if not per_frame:
        return float("nan"), []
    return float(np.mean(np.asarray(per_frame, np.float32))), per_frame


class GmeScoreScorer(VideoScorer):
    """GmeScore of each video: mean over its 32 sampled frames of cos(GME(prompt), GME(frame))."""

    FRAME_RULE = GME_FRAMES
    NEEDS = VideoNeeds(prompt=True)

    def embedder(self) -> GmeEmbedder:
        """The shared GME embedder (loaded on first call)."""
        ensure_demo_checkpoints(self.settings, ("gme",), self.models)
        return shared_gme(self.models, self.settings, effective_model_ids(self.settings, self.models).gme)

    def _provenance_fields(self) -> dict[str, Any]:
        return {**gme_info_fields(self.embedder().info), "instruction": GME_QUERY_INSTRUCTION}

    def _score_video(self, sample: VideoSample, frames: Iterator[VideoFrame]) -> Computed:
        prompt = (sample.prompt or "").strip()  # present: NEEDS checked it
        value, per_frame = gme_score(self.embedder(), (frame.image for frame in frames), prompt)
        return value, None, {"per_frame": per_frame, "prompt_text": prompt}
