"""Image metrics on a video output, frame by frame (METRICS.md "Subject-to-video": "Every image metric above can
also be applied per frame (mean over frames, per-frame values in extras)").

For a `Sample` whose output is a video:
- **Frames**: `image_metric_frames(settings)` = `numpy.linspace(0, T - 1, settings.video_frames, dtype=int)` over the
  T decoded frames (first and last included; repeats when T is smaller, as OpenS2V's sampler), each distinct frame
  decoded once per scoring call for every metric that reads it (`DecodedFrames`). A scorer with its own video rule
  (FaceSim: `VIDEO_FRAME_RULE` + `score_videos`) reads its own frames; the video scorers (GmeScore, NexusScore,
  NaturalScore) decode theirs as they score.
- **Frame samples**: frame k becomes the image sample (same references, reference masks, prompt, subject, labels;
  output = that frame; output mask = `FrameMasks.for_frame(k)`), and the frames of the videos of a chunk go through
  each scorer together: the references are encoded once, the frames in the scorer's batches.
- **Value**: the mean (float64) over the sampled frames (repeats included) of the frames that have a value; frames
  without one (e.g. CLIP-I-Seg of a frame whose mask is empty) are left out and listed with their reason; NaN when no
  frame has a value. Extras: `per_frame` (the sampled frames' values, None where NaN, in sampling order), `frames`
  (the sampling: `rule`, `count`, `frame_count` T, `indices`), `n_frames_with_value`, `frame_reasons`.
- **Provenance**: the scorer's, with params `video_frames` (the sampling, indices included), `video_aggregate` (the
  averaging rule) and, for a metric that reads the output mask, `out_mask_frames` (`FrameMasks.describe()`).
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...imaging import FrameRule, FrameSampling, InputImage, InputVideo, read_frames
from ..base import check_inputs, nan_value
from ..sample import MetricValue, Sample
from .frame_masks import FrameMasks, static_rule
from .sample import VideoSample

FRAME_MEAN = "mean over the sampled frames that have a value (repeats included)"
"""`video_aggregate` of the image metrics applied per frame."""
FRAMES_PER_CHUNK = 64
"""Frames held decoded at once: videos are scored in chunks of at most this many sampled frames (one video at least;
64 frames of 720p are about 270 MB of pixels and PNG bytes)."""

ScoreChunk = Callable[[list[Sample], Mapping[str, Any], str], dict[str, list[MetricValue]]]
"""`score_chunk(samples, scorers, missing)`: the registry's scoring of image samples (each backbone once)."""


def image_metric_frames(settings: Any) -> FrameRule:
    """The frames an image metric reads from a video output: `settings.video_frames` evenly spaced (linspace)."""
    return FrameRule("linspace", int(settings.video_frames))


def video_rule(scorer: Any, settings: Any) -> FrameRule:
    """The frames `scorer` reads from a video output: a video scorer's `FRAME_RULE`, a scorer's own
    `VIDEO_FRAME_RULE` (FaceSim's 32), else `image_metric_frames(settings)`."""
    return (
        getattr(scorer, "FRAME_RULE", None)
        or getattr(scorer, "VIDEO_FRAME_RULE", None)
        or image_metric_frames(settings)
    )


def out_mask_rule(sample: Sample) -> dict[str, Any] | None:
    """How the frames of `sample`'s video got their output mask (`FrameMasks.describe()`; a plain array is static),
    None without an output mask."""
    if sample.out_mask is None:
        return None
    if isinstance(sample.out_mask, FrameMasks):
        return sample.out_mask.describe()
    return static_rule()


def video_provenance(
    provenance: Mapping[str, Any],
    sampling: Mapping[str, Any],
    *,
    aggregate: str | None = None,
    out_mask: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`provenance` with the video's sampling (`video_frames`: rule, count, T, indices), the averaging rule
    (`video_aggregate`) and the frame masks' rule (`out_mask_frames`) added to its params."""
    out = copy.deepcopy(dict(provenance))
    params = dict(out.get("params") or {})
    params["video_frames"] = dict(sampling)
    if aggregate is not None:
        params["video_aggregate"] = aggregate
    if out_mask is not None:
        params["out_mask_frames"] = dict(out_mask)
    out["params"] = params
    return out


def frame_mask(sample: Sample, index: int) -> Any:
    """The output mask of frame `index` of `sample`'s video (the array itself when one mask is given)."""
    if isinstance(sample.out_mask, FrameMasks):
        return sample.out_mask.for_frame(index)
    return sample.out_mask


def frame_sample(sample: Sample, index: int, image: InputImage) -> Sample:
    """Frame `index` (decoded as `image`) of `sample`'s video as an image sample (see the module docstring)."""
    return Sample(
        refs=sample.refs,
        out=image,
        prompt=sample.prompt,
        subject=sample.subject,
        ref_masks=sample.ref_masks,
        out_mask=frame_mask(sample, index),
        ref_labels=sample.ref_labels,
    )


def as_video_sample(sample: Sample) -> VideoSample:
    """The `VideoSample` the video scorers read from a sample whose output is a video (class labels: `ref_labels`,
    else the subject's name for every reference)."""
    return VideoSample(
        video=sample.out_video,
        refs=sample.refs,
        prompt=sample.prompt,
        class_labels=sample.class_labels(),
        subject=sample.subject,
    )


class DecodedFrames:
    """The frames of some videos that some rules read, each distinct frame decoded once (all rules together)."""

    def __init__(self, videos: Sequence[InputVideo], rules: Sequence[FrameRule]) -> None:
        self._frames: dict[str, dict[int, InputImage]] = {}
        for video in videos:
            if video.sha256 in self._frames:
                continue
            wanted = sorted({i for rule in rules for i in rule.indices(video.frame_count)})
            self._frames[video.sha256] = {f.index: f.image for f in read_frames(video, wanted)}

    def get(self, video: InputVideo, rule: FrameRule) -> tuple[FrameSampling, list[InputImage]]:
        """(sampling record, the frames in sampling order) of `video` under `rule`."""
        sampling = rule.describe(video.frame_count)
        frames = self._frames[video.sha256]
        return sampling, [frames[i] for i in sampling["indices"]]

    def frame(self, video: InputVideo, index: int) -> InputImage:
        return self._frames[video.sha256][index]


@dataclass(frozen=True)
class FrameMean:
    value: float
    reason: str | None
    extras: dict[str, Any]


def frame_mean(per_index: Mapping[int, MetricValue], sampling: Mapping[str, Any]) -> FrameMean:
    """The module's averaging of the values of the distinct sampled frames (`per_index`: frame index -> value)."""
    indices = list(sampling["indices"])
    per_frame = [None if per_index[i].is_nan else float(per_index[i].value) for i in indices]
    kept = [v for v in per_frame if v is not None]
    reasons = {str(i): per_index[i].reason or "not computable" for i in sorted(set(indices)) if per_index[i].is_nan}
    extras = {
        "per_frame": per_frame,
        "frames": dict(sampling),
        "n_frames_with_value": len(kept),
        "frame_reasons": reasons,
    }
    if not kept:
        common = Counter(reasons.values()).most_common(1)[0][0] if reasons else "not computable"
        return FrameMean(math.nan, f"no sampled frame has a value ({common})", extras)
    return FrameMean(float(np.mean(np.asarray(kept, np.float64))), None, extras)


def score_videos(
    samples: Sequence[Sample],
    scorers: Mapping[str, Any],
    settings: Any,
    score_chunk: ScoreChunk,
    *,
    positions: Sequence[int] | None = None,
    frames_per_chunk: int = FRAMES_PER_CHUNK,
) -> dict[str, list[MetricValue]]:
    """Every image metric of `scorers` (name -> scorer) for every video sample (output = a video): name -> one
    `MetricValue` per sample, in order (see the module docstring). A sample lacking an input a metric needs gets NaN
    with the reason, naming it by its `positions` entry (its index in the caller's list; default its index here);
    the caller raises first when it should."""
    samples = list(samples)
    positions = list(positions) if positions is not None else list(range(len(samples)))
    results: dict[str, list[MetricValue]] = {name: [] for name in scorers}
    rule = image_metric_frames(settings)
    per_video = max(max(video_rule(s, settings).count for s in scorers.values()) if scorers else 1, 1)
    step = max(1, frames_per_chunk // per_video)
    for start in range(0, len(samples), step):
        chunk = samples[start : start + step]
        for name, values in _score_chunk(
            chunk, positions[start : start + step], scorers, settings, rule, score_chunk
        ).items():
            results[name] += values
    return results


def _check(name: str, needs: Any, chunk: list[Sample], positions: list[int]) -> Any:
    """`check_inputs` of `chunk` (missing -> NaN) with each reason naming the sample by its position."""
    check = check_inputs(name, needs, chunk, "nan")
    for i in list(check.reasons):
        check.reasons[i] = f"{name} needs {', '.join(needs.missing(chunk[i]))}, which sample {positions[i]} lacks"
    return check


def _score_chunk(
    chunk: list[Sample],
    positions: list[int],
    scorers: Mapping[str, Any],
    settings: Any,
    rule: FrameRule,
    score_chunk: ScoreChunk,
) -> dict[str, list[MetricValue]]:
    checks = {name: _check(name, scorer.needs, chunk, positions) for name, scorer in scorers.items()}
    rules = [rule] + [video_rule(s, settings) for s in scorers.values() if hasattr(s, "score_videos")]
    frames = DecodedFrames([s.out_video for i, s in enumerate(chunk) if any(i in c.ok for c in checks.values())], rules)
    out: dict[str, list[MetricValue]] = {}
    own = {name: s for name, s in scorers.items() if hasattr(s, "score_videos")}
    generic = {name: s for name, s in scorers.items() if name not in own}
    for name, scorer in own.items():
        ok = checks[name].ok
        sampled = [frames.get(chunk[i].out_video, video_rule(scorer, settings)) for i in ok]
        scored = (
            dict(zip(ok, scorer.score_videos([chunk[i] for i in ok], [f for _, f in sampled], [s for s, _ in sampled])))
            if ok
            else {}
        )
        out[name] = [
            scored.get(i) or _lacking(name, scorer, chunk[i], checks[name].reasons.get(i, ""), settings)
            for i in range(len(chunk))
        ]
    if generic:
        out.update(_score_generic(chunk, generic, checks, frames, settings, score_chunk))
    return {name: out[name] for name in scorers}


def _score_generic(
    chunk: list[Sample],
    scorers: Mapping[str, Any],
    checks: Mapping[str, Any],
    frames: DecodedFrames,
    settings: Any,
    score_chunk: ScoreChunk,
) -> dict[str, list[MetricValue]]:
    """Each generic metric per frame: the distinct frames of the videos some metric can score, all together."""
    rule = image_metric_frames(settings)
    wanted = sorted({i for name in scorers for i in checks[name].ok})
    flat: list[Sample] = []
    where: dict[tuple[int, int], int] = {}
    samplings: dict[int, FrameSampling] = {}
    for i in wanted:
        sampling, _ = frames.get(chunk[i].out_video, rule)
        samplings[i] = sampling
        for index in dict.fromkeys(sampling["indices"]):
            where[i, index] = len(flat)
            flat.append(frame_sample(chunk[i], index, frames.frame(chunk[i].out_video, index)))
    scored = score_chunk(flat, scorers, "nan") if flat else {}
    out: dict[str, list[MetricValue]] = {}
    for name, scorer in scorers.items():
        values = []
        for i, sample in enumerate(chunk):
            if i not in checks[name].ok:
                values.append(_lacking(name, scorer, sample, checks[name].reasons.get(i, ""), settings))
                continue
            sampling = samplings[i]
            per_index = {index: scored[name][where[i, index]] for index in dict.fromkeys(sampling["indices"])}
            mean = frame_mean(per_index, sampling)
            provenance = value_provenance(
                scorer,
                settings,
                next(iter(per_index.values())).provenance,
                sample.out_video.frame_count,
                out_mask_rule(sample),
            )
            values.append(MetricValue(name, mean.value, mean.reason, mean.extras, provenance))
        out[name] = values
    return out


def value_provenance(
    scorer: Any,
    settings: Any,
    provenance: Mapping[str, Any],
    frame_count: int,
    out_mask: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance of `scorer`'s value for a video of `frame_count` frames, from the scorer's own `provenance`:
    what scoring records and what batch planning predicts (so a value stored once is recognised as done). The frame
    masks' rule `out_mask` is kept only for a metric that reads the output mask."""
    sampling = video_rule(scorer, settings).describe(frame_count)
    if scorer.spec.media == "video":
        return video_provenance(provenance, sampling)
    reads_mask = bool(getattr(scorer.needs, "out_mask", False))
    return video_provenance(
        provenance,
        sampling,
        aggregate=getattr(scorer, "VIDEO_AGGREGATE", FRAME_MEAN),
        out_mask=out_mask if reads_mask else None,
    )


def _lacking(name: str, scorer: Any, sample: Sample, reason: str, settings: Any) -> MetricValue:
    """NaN for a video sample lacking an input of `name`, with the provenance it would have had."""
    return nan_value(
        name,
        reason or "not computable",
        value_provenance(scorer, settings, scorer.provenance(), sample.out_video.frame_count, out_mask_rule(sample)),
    )
