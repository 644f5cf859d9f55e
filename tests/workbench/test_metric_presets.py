"""Metric presets: the three groups of issue 13, every member a registered image metric."""

from __future__ import annotations

import pytest

from masc_ui.errors import InputError
from masc_ui.metrics.registry import metric_names
from masc_ui.workbench.metric_presets import PRESETS, preset_label, preset_metrics


def test_labels_name_the_metrics_of_each_preset():
    assert [preset_label(name) for name in PRESETS] == [
        "subject (CP, CLIP-I, CLIP-I-Seg, DINO-I, FaceSim)",
        "prompt (PF, CLIP-T, VQAScore, ITMScore)",
        "quality (PickScore, FaceScore, ArtScore)",
    ]


def test_every_preset_metric_is_a_registered_image_metric():
    known = set(metric_names("image"))
    for name in PRESETS:
        assert set(preset_metrics(name)) <= known


def test_unknown_preset_is_a_clear_error():
    with pytest.raises(InputError, match="unknown metric preset 'style'.*subject, prompt, quality"):
        preset_metrics("style")
