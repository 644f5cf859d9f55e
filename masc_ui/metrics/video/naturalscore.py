"""NaturalScore (OpenS2V-Nexus): how real a generated video looks, judged by a multimodal chat model. [0, 1],
higher is better.

Recipe (OpenS2V `eval/get_naturalscore.py`, read, not copied):
- frames `i * max(T // 16, 1)` for i = 0..15 (indices >= T dropped: `masc_ui.imaging.stride_indices`), each resized
  to a long side of 512 px and JPEG-encoded (`masc_ui.imaging.natural_frame_jpeg`);
- one user message: the 16 frames as `image_url` parts (`data:image/jpeg;base64,...`), then `RUBRIC`, OpenS2V's
  1-5 realism rubric, verbatim (OpenS2V-Nexus, Apache-2.0); no system message; temperature and seed not sent unless
  set (`judge_temperature`, `judge_seed`), as OpenS2V;
- the answer's rating = its first number (`parse_rating`), which must lie in [1, 5];
- 3 independent calls (OpenS2V runs the script three times); NaturalScore = (mean rating - 1) / 4.
A call that fails (after the retries of `masc_ui.metrics.judges.client`) or whose answer holds no rating makes the video's
value NaN with the reason (our choice: a mean of fewer calls would be a different estimator); the 3 raw answers,
their errors and attempts are in extras (`answers`) either way. OpenS2V records the string "error" instead.

Provenance params: the judge model, base URL, the full rubric text and its SHA-256, temperature, seed, number of
calls, frame size and JPEG quality. The API key is never recorded.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ...imaging import FrameRule, VideoFrame, natural_frame_jpeg
from ..judges.client import CallBudget, ChatJudge, JudgeConfig
from .sample import VideoNeeds, VideoSample
from .scorer import Computed, VideoScorer

NATURAL_FRAMES = FrameRule("stride", 16)
NATURAL_CALLS = 3
LONG_SIDE = 512
JPEG_QUALITY = 95
RUBRIC = """
Your task is to determine how realistic the given video clip appears, based on 16 extracted frames. Consider the following aspects in your evaluation:

- **Common sense consistency**: Are the objects, people, and interactions logically coherent in the context of the video?
- **Physical plausibility**: Do lighting, shadows, motion, and reflections obey the laws of physics? Are the objects in motion consistent with real-world physics?
- **Naturalness**: Does the visual quality (textures, details, proportions, etc.) resemble what we would expect in real life? Is there any unnatural visual distortion?
- **AI generation artifacts**: Are there signs of unnatural blurring, morphing, glitches, distortions, or inconsistencies across frames?

**If the video contains humans**, pay special attention to:
- Are the facial features realistic and anatomically correct (e.g., eyes, mouth, and nose proportions)?
- Do the body parts appear proportionate and natural in motion (e.g., arm and leg movements, hand gestures)?

If **no humans** are present in the video, you can focus on evaluating the realism of other visual aspects like object consistency, motion fluidity, and environmental plausibility without needing to specifically assess human-related elements.

Output a score from 1 to 5 based on the criteria below, followed by an explanation of the reasoning behind your score:

- **1 — Definitely AI-Generated**: Clear and frequent artifacts (e.g., blurry faces or objects, unnatural movements, inconsistent lighting), distorted shapes, implausible physics (e.g., impossible movements, lighting issues), and severe inconsistencies. Violates common sense or real-world logic. Faces and bodies may be unrealistic or distorted if humans are present.
- **2 — Likely AI-Generated**: Noticeable AI generation cues such as inconsistent anatomy, fluctuating object textures, or mild physical implausibility (e.g., unnatural hand positions or eye movements). Faces and bodies may appear unnatural or inconsistent if humans are present. Still clearly synthetic upon inspection.
- **3 — Uncertain / Borderline**: Mixed indicators — the video may appear mostly natural but contains subtle flaws or small anomalies that raise suspicion. Faces and bodies might show mild inconsistencies (e.g., slight distortion in facial features or body parts) if humans are present. Hard to determine definitively.
- **4 — Likely Real**: Mostly natural and physically plausible, with only minor and rare irregularities that might be explainable (e.g., slight compression, mild lighting inconsistencies). Faces and body parts are mostly natural, with only minor imperfections, if humans are present.
- **5 — Definitely Real**: Fully consistent with real-world physics, common sense, and appearance. No visible artifacts or signs of AI generation. Faces and body parts appear fully realistic, without any visible distortions or unnatural movements, if humans are present.

Please only return the score (1-5), no additional explanation.
"""
"""OpenS2V-Nexus's realism rubric (eval/get_naturalscore.py, Apache-2.0), verbatim, leading/trailing newlines kept."""
RUBRIC_SHA256 = hashlib.sha256(RUBRIC.encode()).hexdigest()
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_rating(answer: str | None) -> tuple[float | None, str | None]:
    """(rating, None) when the answer's first number lies in [1, 5] (e.g. "4", "**4**", "Score: 4 - ...", "4.5");
    (None, reason) otherwise."""
    match = _NUMBER.search(answer or "")
    if match is None:
        return None, "the answer holds no rating 1-5"
    value = float(match.group())
    if not 1.0 <= value <= 5.0:
        return None, f"the answer's first number {match.group()} is not a rating 1-5"
    return value, None


def frame_content(jpegs: list[bytes], rubric: str = RUBRIC) -> list[dict[str, Any]]:
    """The user message's content parts: each JPEG as a base64 data URL, then the rubric."""
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")}}
        for data in jpegs
    ]
    return parts + [{"type": "text", "text": rubric}]


def natural_score(judge: ChatJudge, jpegs: list[bytes], *, calls: int = NATURAL_CALLS, workers: int = 1) -> Computed:
    """(value, reason, extras) from `calls` independent judge calls on the frames `jpegs` (see the module
    docstring); the calls run `workers` at a time."""
    content = frame_content(jpegs)
    with ThreadPoolExecutor(max_workers=max(1, min(workers, calls))) as pool:
        replies = list(pool.map(lambda _: judge.ask(content), range(calls)))
    answers, ratings, problems = [], [], []
    for k, reply in enumerate(replies, start=1):
        entry = {"call": k, **reply.as_dict(), "rating": None}
        if reply.error is not None:
            problems.append(f"call {k} of {calls}: {reply.error}")
        else:
            rating, why = parse_rating(reply.text)
            entry["rating"] = rating
            if rating is None:
                problems.append(f"call {k} of {calls}: {why} ({_short(reply.text)})")
            else:
                ratings.append(rating)
        answers.append(entry)
    extras: dict[str, Any] = {"answers": answers, "ratings": [a["rating"] for a in answers], "n_frames": len(jpegs)}
    if problems:
        return math.nan, "; ".join(problems), extras
    mean = sum(ratings) / len(ratings)
    extras["mean_rating"] = mean
    return (mean - 1.0) / 4.0, None, extras


def _short(text: str | None, limit: int = 80) -> str:
    text = (text or "").strip().replace("\n", " ")
    return repr(text if len(text) <= limit else text[:limit] + "...")


class NaturalScoreScorer(VideoScorer):
    """NaturalScore of each video; one `CallBudget` per scorer, i.e. per run (`judge_max_calls`,
    `judge_max_tokens`)."""

    FRAME_RULE = NATURAL_FRAMES
    NEEDS = VideoNeeds()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.budget = CallBudget(self.settings.judge_max_calls, self.settings.judge_max_tokens)
        self._judge: ChatJudge | None = None

    def judge(self) -> ChatJudge:
        """The judge client (created on first use; `ModelUnavailableError` when no key is set for OpenAI's API)."""
        if self._judge is None:
            self._judge = ChatJudge(JudgeConfig.from_settings(self.settings), self.budget)
        return self._judge

    def _provenance_fields(self) -> dict[str, Any]:
        config = self.judge().config
        return {
            "model_id": config.model,
            "revision": None,
            "device": "api",
            "dtype": None,
            "base_url": config.base_url,
            "rubric": RUBRIC,
            "rubric_sha256": RUBRIC_SHA256,
            "temperature": config.temperature,
            "seed": config.seed,
            "calls": NATURAL_CALLS,
            "long_side": LONG_SIDE,
            "jpeg_quality": JPEG_QUALITY,
        }

    def _score_video(self, sample: VideoSample, frames: Iterator[VideoFrame]) -> Computed:
        jpegs = [natural_frame_jpeg(f.image, long_side=LONG_SIDE, quality=JPEG_QUALITY) for f in frames]
        return natural_score(self.judge(), jpegs, workers=self.settings.judge_workers)
