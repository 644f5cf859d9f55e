"""FaceSim of a video (OpenS2V-Nexus `get_facesim.py`, METRICS.md "Subject-to-video"): the per-video averaging rule,
as a pure function. The face detector/embedder that produces the per-frame cosines is the image FaceSim scorer's.

Rule: 32 frames (`FACESIM_FRAMES`, numpy.linspace over the decoded frames); per frame s = max(0, cos(reference face,
frame face)); frames without a face and frames with s == 0 are dropped; FaceSim = mean of the remaining s, 0 when none
remain (a video where the face never matches scores 0, not NaN, as OpenS2V).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import InputError
from ...imaging import FrameRule

FACESIM_FRAMES = FrameRule("linspace", 32)


def video_facesim(frame_cosines: Sequence[float | None], *, drop_zeros: bool = True) -> tuple[float, dict[str, Any]]:
    """(FaceSim, extras) from the cosine of the reference face with the face of each sampled frame (None = no face
    found in that frame). Extras: `per_frame` (max(0, cos), None without a face), `n_frames`, `n_with_face`, `n_used`.
    `drop_zeros=False` keeps the frames whose max(0, cos) is 0 in the mean (OpenS2V's ArcFace loop: its test
    `arc_scores != 0.0` compares the list, never the score, so no frame is dropped there).
    Raises `InputError` for a NaN or infinite cosine."""
    per_frame: list[float | None] = []
    for k, cos in enumerate(frame_cosines):
        if cos is None:
            per_frame.append(None)
            continue
        if not math.isfinite(float(cos)):
            raise InputError(f"video FaceSim: the cosine of frame {k} is {cos}; expected a finite number or None")
        per_frame.append(max(0.0, float(cos)))
    used = [s for s in per_frame if s is not None and (s != 0.0 or not drop_zeros)]
    value = float(np.mean(np.asarray(used, np.float64))) if used else 0.0
    return value, {
        "per_frame": per_frame,
        "n_frames": len(per_frame),
        "n_with_face": sum(s is not None for s in per_frame),
        "n_used": len(used),
    }
