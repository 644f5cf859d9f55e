"""`Sample.out_image` / `Sample.out_video`: the output as the kind a scorer reads, with a clear error otherwise."""

import numpy as np
import pytest

from masc_ui.errors import InputError
from masc_ui.imaging import InputImage, open_video
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.sample import Sample
from tests.video_files import encode_video, synthetic_frames

REF = np.full((64, 64, 3), 120, np.uint8)


def _video_sample() -> Sample:
    return Sample(refs=(REF,), out=open_video(encode_video(synthetic_frames(4), "mp4"), name="clip.mp4"))


def test_out_image_and_out_video_give_the_output_of_their_kind():
    image = Sample(refs=(REF,), out=REF)
    video = _video_sample()
    assert isinstance(image.out_image, InputImage) and image.out_image is image.out
    assert video.out_video is video.out
    with pytest.raises(InputError, match="the output 'clip.mp4' is a video and this scores images"):
        _ = video.out_image
    with pytest.raises(InputError, match="is an image; a video metric needs a video output"):
        _ = image.out_video


@pytest.mark.parametrize("metric", ["clip_i", "dino_i", "cp"])
def test_an_image_scorer_given_a_video_says_so(demo_settings, metric):
    sample = _video_sample()
    sample = Sample(
        refs=sample.refs, out=sample.out, prompt="a square", subject="square", ref_masks=(np.ones((64, 64), bool),)
    )
    with pytest.raises(InputError, match="is a video and this scores images; score it with .*score_metrics"):
        get_scorer(metric, demo_settings).score([sample], missing="nan")
