"""Motion (OpenS2V `get_motionscore.py`, `motion_fb`) against the release's computation written again here."""

import math

import cv2
import numpy as np
import pytest

from masc_ui.errors import InputError
from masc_ui.imaging import open_video, read_frames
from masc_ui.metrics.registry import get_scorer, get_spec, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.metrics.video.sample import VideoSample
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.settings import Settings
from tests.video_files import encode_video, synthetic_frames

SETTINGS = Settings(profile="demo", device="cpu")


def _release_motion(frames: list[np.ndarray]) -> float:
    """The release's `process_video` on decoded RGB frames: every flow kept, then resized, stacked and averaged."""
    prev = cv2.cvtColor(frames[0], cv2.COLOR_BGR2GRAY)
    flows = []
    for frame in frames[1:]:
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        flows.append(cv2.calcOpticalFlowFarneback(prev, gray, None, 0.5, 3, 15, 3, 5, 1.2, 0))
        prev = gray
    small = [cv2.resize(f, (16, int(f.shape[0] * (16 / f.shape[1]))), interpolation=cv2.INTER_AREA) for f in flows]
    return abs(float(np.mean(np.mean(np.array(small), axis=0))))


def _pan(n: int, step: int = 2, width: int = 96, height: int = 64) -> list[np.ndarray]:
    """A textured picture sliding right by `step` px per frame (the whole frame moves)."""
    rng = np.random.default_rng(0)
    wide = cv2.GaussianBlur(rng.integers(0, 256, (height, width + step * n, 3), dtype=np.uint8), (5, 5), 0)
    return [np.ascontiguousarray(wide[:, step * (n - i) : step * (n - i) + width]) for i in range(n)]


def _video(frames, fmt="mp4"):
    return open_video(encode_video(frames, fmt), name="clip")


def _motion(*videos, models=None):
    return get_scorer("motion", SETTINGS, models or ModelRegistry()).score([VideoSample(video=v) for v in videos])


@pytest.mark.parametrize("frames", [synthetic_frames(20), _pan(16)], ids=["square", "pan"])
def test_motion_equals_the_release_computation_on_every_frame(frames):
    video = _video(frames)
    [value] = _motion(video)
    decoded = [np.asarray(f.image.pixels) for f in read_frames(video, range(video.frame_count))]
    assert value.value == _release_motion(decoded) and value.reason is None
    assert (
        value.extras["frames"]["indices"] == list(range(video.frame_count)) and value.extras["frames"]["rule"] == "all"
    )
    assert value.extras["n_pairs"] == video.frame_count - 1 == len(value.extras["pair_means"])
    assert value.extras["map_size"] == [16, 10]  # 96x64 -> 16 wide, int(64 * 16 / 96) high
    prov = value.provenance
    assert prov["model_id"] == "opencv-farneback" and prov["revision"] == cv2.__version__
    assert prov["params"]["farneback"]["winsize"] == 15 and prov["params"]["video_frames"]["rule"] == "all"


def test_a_pan_moves_and_a_still_does_not():
    [pan, still] = _motion(_video(_pan(16, step=2)), _video([synthetic_frames(1)[0]] * 12))
    assert 0.5 < pan.value < 1.5  # dx ~ 2 px, dy ~ 0: their mean ~ 1
    assert still.value < 0.01 and get_spec("motion").in_range(pan.value)


def test_a_batch_equals_one_at_a_time():
    videos = [_video(synthetic_frames(10)), _video(_pan(12), "webm"), _video(synthetic_frames(14))]
    together = [v.value for v in _motion(*videos)]
    assert together == [_motion(v)[0].value for v in videos] and len(set(together)) == 3


def test_one_frame_and_too_wide_videos_are_nan_with_the_reason():
    [one] = _motion(_video(synthetic_frames(1)))
    assert math.isnan(one.value) and "at least 2 frames" in one.reason
    wide = [np.zeros((16, 288, 3), np.uint8)] * 3
    [flat] = _motion(_video(wide))
    assert math.isnan(flat.value) and "288x16 video is too wide" in flat.reason


def test_bad_input_gets_a_clear_error():
    with pytest.raises(InputError, match="motion scores videos: sample 0 is a str"):
        get_scorer("motion", SETTINGS).score(["clip.mp4"])
    with pytest.raises(InputError, match="metric motion has no parameter"):
        get_scorer("motion", SETTINGS, frames=8)
    image = Sample(refs=(), out=np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(InputError, match="motion judges videos: the output of sample 0 is an image"):
        score_metrics([image], "motion", SETTINGS)
    assert "judges videos" in score_metrics([image], "motion", SETTINGS, missing="nan")["motion"][0].reason
