"""Metric presets: the groups a researcher reports together and two benchmark tables, every member a registered
metric; a preset ticks what is offered and says what it left out and why."""

from __future__ import annotations

import pytest

from masc_ui.errors import InputError
from masc_ui.metrics.registry import metric_names
from masc_ui.workbench.metric_presets import PRESETS, offered_preset, preset_label, preset_metrics


def test_labels_name_the_metrics_of_each_preset():
    assert [preset_label(name) for name in PRESETS] == [
        "subject (CP, CLIP-I, CLIP-I-Seg, DINO-I, FaceSim)",
        "prompt (PF, CLIP-T, VQAScore, ITMScore)",
        "quality (PickScore, FaceScore, ArtScore)",
        "DreamBench++ table (DINO-I, CLIP-I, CLIP-T, DreamBench++ CP, DreamBench++ PF)",
        "OpenS2V table (Aesthetic, Motion, FaceSim, GmeScore, NexusScore, NaturalScore, OpenS2V Total)",
    ]


def test_every_preset_metric_is_a_registered_metric():
    known = set(metric_names(None))
    for name in PRESETS:
        assert set(preset_metrics(name)) <= known
    assert set(preset_metrics("opens2v")) & set(metric_names("video")) == {
        "motion",
        "gmescore",
        "nexusscore",
        "naturalscore",
        "opens2v_total",
    }


def test_a_preset_ticks_only_what_is_offered_and_says_why_the_rest_is_not():
    images = metric_names("image")
    chosen, note = offered_preset("opens2v", images)
    assert chosen == ["aesthetic", "facesim"]
    assert note == (
        "OpenS2V table: Motion, GmeScore, NexusScore, NaturalScore, OpenS2V Total score videos only: "
        "load an output video to add them."
    )
    with_video = [*images, "motion", "gmescore", "nexusscore"]
    chosen, note = offered_preset("opens2v", with_video, video=True)
    assert chosen == ["aesthetic", "motion", "facesim", "gmescore", "nexusscore"]
    assert note.startswith("OpenS2V table: NaturalScore, OpenS2V Total are not offered with these settings")
    assert "MASC_JUDGE_API_KEY" in note
    chosen, note = offered_preset("dreambench", [n for n in images if not n.startswith("dbpp_")])
    assert chosen == ["dino_i", "clip_i", "clip_t"] and "DreamBench++ CP, DreamBench++ PF are not offered" in note
    assert offered_preset("subject", images) == (["cp", "clip_i", "clip_i_seg", "dino_i", "facesim"], "")


def test_unknown_preset_is_a_clear_error():
    with pytest.raises(
        InputError, match="unknown metric preset 'style'.*subject, prompt, quality, dreambench, opens2v"
    ):
        preset_metrics("style")
