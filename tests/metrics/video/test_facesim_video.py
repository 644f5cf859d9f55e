import pytest

from masc_ui.errors import InputError
from masc_ui.metrics.video.facesim_video import FACESIM_FRAMES, video_facesim


def test_frames_without_a_face_and_zero_values_are_dropped():
    value, extras = video_facesim([0.8, None, -0.2, 0.0, 0.4, None])
    assert value == pytest.approx((0.8 + 0.4) / 2)
    assert extras == {"per_frame": [0.8, None, 0.0, 0.0, 0.4, None], "n_frames": 6, "n_with_face": 4, "n_used": 2}


def test_no_usable_frame_gives_zero_not_nan():
    assert video_facesim([None, None])[0] == 0.0
    assert video_facesim([-0.5, 0.0])[0] == 0.0
    assert video_facesim([])[0] == 0.0


def test_the_rule_reads_32_linspace_frames_and_refuses_nan():
    assert FACESIM_FRAMES.kind == "linspace" and FACESIM_FRAMES.count == 32
    with pytest.raises(InputError, match="frame 1 is nan"):
        video_facesim([0.3, float("nan")])
