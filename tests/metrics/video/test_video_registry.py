"""Video metrics in the registry: declared once, kept apart from the image metrics' "all"."""

import math

import numpy as np
import pytest

from masc_ui.errors import InputError
from masc_ui.imaging import open_video
from masc_ui.metrics.base import MetricSpec
from masc_ui.metrics.registry import (
    get_scorer,
    get_spec,
    list_metrics,
    metric_names,
    parse_metric_names,
    score_metrics,
    score_video_metrics,
)
from masc_ui.metrics.sample import Sample
from masc_ui.metrics.video.sample import VideoSample
from masc_ui.models.loaded_models import ModelRegistry
from tests.video_files import encode_video, synthetic_frames

VIDEO = ["gmescore", "nexusscore", "naturalscore", "motion", "opens2v_total"]


def test_video_metrics_are_declared_with_their_metadata():
    assert [s.name for s in list_metrics("video")] == VIDEO == metric_names("video")
    assert all(s.media == "image" for s in list_metrics())
    assert [s.name for s in list_metrics(None)][-len(VIDEO) :] == VIDEO
    assert get_spec("gmescore").range == (-1.0, 1.0) and get_spec("gmescore").needs_prompt
    assert get_spec("nexusscore").range == (0.0, 1.0) and get_spec("nexusscore").needs_reference
    assert get_spec("naturalscore").range == (0.0, 1.0) and "judge_model" in get_spec("naturalscore").backbone_settings
    for spec in list_metrics("video"):
        assert spec.higher_is_better and spec.convention and "OpenS2V" in spec.paper
    with pytest.raises(InputError, match="media must be one of"):
        MetricSpec("x", "X", (0, 1), True, "c", "p", media="audio")


def test_names_of_the_other_media_are_refused_clearly():
    assert parse_metric_names("all", media="video") == VIDEO
    assert "gmescore" not in parse_metric_names("all")
    with pytest.raises(InputError, match="metric gmescore judges videos, not images"):
        parse_metric_names("cp,gmescore")
    with pytest.raises(InputError, match="metric cp judges images, not videos"):
        parse_metric_names("cp", media="video")
    image = Sample(refs=(np.zeros((8, 8, 3), np.uint8),), out=np.zeros((8, 8, 3), np.uint8), prompt="a square")
    with pytest.raises(InputError, match="gmescore judges videos: the output of sample 0 is an image"):
        score_metrics([image], "gmescore", None)
    assert math.isnan(score_metrics([image], "gmescore", None, missing="nan")["gmescore"][0].value)


def test_score_video_metrics_checks_every_metric_first_and_shares_gme(demo_settings):
    video = open_video(encode_video(synthetic_frames(8), "mp4"))
    models = ModelRegistry()
    with pytest.raises(InputError, match="gmescore needs prompt"):
        score_video_metrics([VideoSample(video=video)], "gmescore,nexusscore", demo_settings, models)
    assert not [k for k in models.loaded() if k[0] == "gme"]
    results = score_video_metrics(
        [VideoSample(video=video, prompt="a square")], "gmescore,nexusscore", demo_settings, models, missing="nan"
    )
    assert math.isfinite(results["gmescore"][0].value)
    assert math.isnan(results["nexusscore"][0].value) and "needs reference" in results["nexusscore"][0].reason
    assert len([k for k in models.loaded() if k[0] == "gme"]) == 1
    assert (
        get_scorer("gmescore", demo_settings, models).embedder()
        is get_scorer("nexusscore", demo_settings, models).parts()[1]
    )
