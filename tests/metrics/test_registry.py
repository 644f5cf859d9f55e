"""The metric registry: declarations, name parsing, external metrics, one scorer interface for all, CP/PF from
the MaSC engine, and `score_metrics` running each backbone once."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from PIL import Image

import masc_ui.metrics as metrics
from masc_ui.errors import InputError
from masc_ui.metrics.base import MetricSpec
from masc_ui.metrics.registry import (
    external_metric_spec,
    get_scorer,
    get_spec,
    list_metrics,
    parse_metric_names,
    score_metrics,
)
from masc_ui.metrics.sample import MetricValue, Sample
from masc_ui.models.loaded_models import ModelRegistry

NAMES = [
    "cp",
    "pf",
    "clip_i",
    "clip_i_seg",
    "clip_t",
    "clipscore",
    "pickscore",
    "dino_i",
    "dino_i_seg",
    "dinov2_i",
    "dinov2_i_seg",
    "dreamsim",
    "dreamsim_seg",
    "vqascore",
    "itmscore",
    "facesim",
    "facescore",
    "artscore",
    "imagereward",
    "hpsv21",
    "aesthetic",
    "facesim_arc",
]
JUDGES = ["dbpp_cp", "dbpp_pf"]
"""Image metrics asked of a chat model (tests/metrics/judges): no judge can be asked with the demo settings' API."""
FACE_METRICS = {"facesim", "facescore", "facesim_arc"}
DISTANCES = {"dreamsim", "dreamsim_seg"}
"""The metrics where lower is better."""
"""Metrics that cannot apply to images without a face (NaN with the reason): the random images here have none."""


def _image(seed: int, size=(80, 64)) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


def _mask(x0=10, y0=10, x1=50, y1=40, size=(80, 64)) -> np.ndarray:
    m = np.zeros((size[1], size[0]), bool)
    m[y0:y1, x0:x1] = True
    return m


def _sample(seed: int, ref: Image.Image | None = None, prompt="a photo of a cat on the beach") -> Sample:
    ref = ref if ref is not None else _image(1000 + seed)
    return Sample(
        refs=(ref,), out=_image(seed), prompt=prompt, subject="cat", ref_masks=(_mask(),), out_mask=_mask(20, 5, 60, 50)
    )


def test_every_metric_declared_once_with_its_metadata():
    specs = list_metrics()
    assert [s.name for s in specs] == NAMES + JUDGES
    assert metrics.list_metrics() == specs
    for spec in specs:
        assert isinstance(spec, MetricSpec) and spec.display_name and spec.convention and spec.paper
        assert spec.range[0] < spec.range[1] and spec.higher_is_better == (spec.name not in DISTANCES)
        assert spec.backbone_settings and not spec.external
    assert get_spec("clipscore").range == (0.0, 2.5)
    assert get_spec("pickscore").range == (-100.0, 100.0)
    assert get_spec("clip_i").range == (-1.0, 1.0)
    assert get_spec("clip_i_seg").needs_masks == "out" and get_spec("cp").needs_masks == "ref"
    assert get_spec("pf").needs_masks == "out" and get_spec("pf").needs_prompt
    assert get_spec("clip_t").needs_prompt and not get_spec("clip_t").needs_reference
    assert get_spec("dino_i").backbone_settings == ("dino_model",)
    assert get_spec("pickscore").backbone_settings == ("pickscore_model", "pickscore_processor")


def test_every_metric_belongs_to_a_declared_family():
    from masc_ui.metrics.base import FAMILIES

    for spec in list_metrics(None):
        assert spec.family in FAMILIES and spec.family != "external", spec.name
    assert {s.family for s in list_metrics("video")} == {"video"}
    assert get_spec("cp").family == get_spec("pf").family == "masc"
    assert external_metric_spec("gpt4o_pf", 0, 4).family == "external"
    with pytest.raises(InputError, match="family must be one of"):
        MetricSpec("x", "X", (0.0, 1.0), True, "c", "p", family="nonsense")


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(InputError, match="unknown metric 'clip'; known metrics: cp, pf, clip_i"):
        get_spec("clip")


def test_parse_metric_names():
    assert parse_metric_names("all") == NAMES + JUDGES
    assert parse_metric_names("cp, pf,clip_i,cp") == ["cp", "pf", "clip_i"]
    assert parse_metric_names(["dino_i"]) == ["dino_i"]
    with pytest.raises(InputError, match="no metric named"):
        parse_metric_names(" , ")
    with pytest.raises(InputError, match="unknown metric 'clipt'"):
        parse_metric_names("cp,clipt")


def test_external_metric_spec():
    judge = external_metric_spec("gpt4o_cp", 0, 4, display_name="GPT-4o CP")
    assert judge.external and judge.range == (0.0, 4.0) and judge.higher_is_better
    assert judge.display_name == "GPT-4o CP" and "not computed" in judge.convention
    assert judge.in_range(3.0) and not judge.in_range(5.0)
    assert not external_metric_spec("loss", 0, 1, higher_is_better=False).higher_is_better
    with pytest.raises(InputError, match="taken by a built-in metric"):
        external_metric_spec("cp", 0, 1)
    with pytest.raises(InputError, match="lo < hi"):
        external_metric_spec("judge", 4, 0)
    with pytest.raises(InputError, match="must be numbers"):
        external_metric_spec("judge", "low", 4)
    with pytest.raises(InputError, match="non-empty name"):
        external_metric_spec(" ", 0, 1)


def test_one_interface_for_all(demo_settings):
    models = ModelRegistry()
    samples = [_sample(0), _sample(1)]
    for name in NAMES:
        scorer = get_scorer(name, demo_settings, models)
        assert scorer.spec is get_spec(name)
        values = scorer.score(samples)
        assert len(values) == 2
        for v in values:
            assert isinstance(v, MetricValue) and v.metric == name
            if name in FACE_METRICS:
                assert math.isnan(v.value) and v.reason.startswith("no face found in the output"), (name, v.reason)
            else:
                assert not math.isnan(v.value) and v.reason is None, (name, v.reason)
            assert scorer.spec.in_range(v.value), (name, v.value)
            assert {"model_id", "revision", "params", "device", "dtype", "code_version"} <= set(v.provenance)
            assert v.provenance["device"] == "cpu" and v.provenance["dtype"] == "float32"
            assert v.provenance["revision"] == "local"


def test_cp_pf_equal_the_engine(demo_settings, demo_weights):
    from masc_ui.metrics.masc.engine import MaSC

    ref = _image(50)
    samples = [
        _sample(0, ref),
        _sample(1, ref),
        Sample(
            refs=(ref, _image(51)),
            out=_image(2),
            prompt="a cat",
            subject="cat",
            ref_masks=(_mask(), _mask(0, 0, 30, 30)),
            out_mask=_mask(),
        ),
    ]
    expected = MaSC(str(demo_weights / "siglip2-naflex"), device="cpu", dtype="float32").score_many(samples)
    got = score_metrics(samples, "cp,pf", demo_settings)
    assert [v.value for v in got["cp"]] == pytest.approx([r.cp for r in expected], abs=1e-6)
    assert [v.value for v in got["pf"]] == pytest.approx([r.pf for r in expected], abs=1e-6)
    assert got["cp"][2].extras["cp_per_ref"] == pytest.approx(expected[2].extras["cp_per_ref"], abs=1e-6)
    assert got["pf"][0].extras["prompt_text"] == "a photo of on the beach"
    assert got["cp"][0].provenance["params"]["fg_threshold"] == demo_settings.fg_threshold


def test_cp_pf_one_engine_pass_and_nan_reasons(demo_settings, monkeypatch):
    from masc_ui.metrics.masc.engine import MaSC

    calls = []
    real = MaSC.score_many
    monkeypatch.setattr(MaSC, "score_many", lambda self, s, *a, **k: calls.append(len(s)) or real(self, s, *a, **k))
    empty_ref = Sample(
        refs=(_image(3),), out=_image(4), prompt="a cat", ref_masks=(np.zeros((64, 80)),), out_mask=np.ones((64, 80))
    )
    got = score_metrics([_sample(0), empty_ref], ["cp", "pf"], demo_settings)
    assert calls == [2]
    assert math.isnan(got["cp"][1].value) and "empty reference mask" in got["cp"][1].reason
    assert math.isnan(got["pf"][1].value) and "every output patch is foreground" in got["pf"][1].reason


def test_cp_pf_missing_inputs(demo_settings):
    no_masks = Sample(refs=(_image(5),), out=_image(6), prompt="a cat")
    with pytest.raises(InputError, match=r"cp needs ref_masks\[0\], which sample 0 lacks"):
        get_scorer("cp", demo_settings).score([no_masks])
    with pytest.raises(InputError, match="pf needs out_mask"):
        get_scorer("pf", demo_settings).score([no_masks])
    got = score_metrics([no_masks, _sample(1)], "cp,pf", demo_settings, missing="nan")
    assert got["cp"][0].is_nan and "ref_masks[0]" in got["cp"][0].reason and not got["cp"][1].is_nan
    assert got["pf"][0].is_nan and "out_mask" in got["pf"][0].reason and not got["pf"][1].is_nan


def test_score_metrics_checks_every_metric_before_running(demo_settings, monkeypatch):
    from masc_ui.metrics.clip import backbone as clip_backbone

    monkeypatch.setattr(clip_backbone, "load_clip_backbone", lambda *a, **k: pytest.fail("loaded a model"))
    with pytest.raises(InputError, match="clip_t needs prompt"):
        score_metrics([Sample(refs=(_image(7),), out=_image(8))], "clip_i,clip_t", demo_settings)


def test_one_forward_per_image_per_backbone(demo_settings):
    """N outputs sharing one reference: CLIP-I, CLIP-I-Seg, CLIP-T and CLIPScore together encode each distinct
    image once (N outputs + 1 reference + N segmented crops) and each distinct prompt once."""
    from masc_ui.metrics.clip.family import ClipScorer
    from masc_ui.metrics.dino.dino_i import DinoImageScorer

    models = ModelRegistry()
    ref = _image(60)
    prompts = ["a cat", "a dog", "a cat"]
    samples = [_sample(i, ref, prompt=prompts[i % 3]) for i in range(5)]
    names = "clip_i,clip_i_seg,clip_t,clipscore,dino_i"
    first = score_metrics(samples, names, demo_settings, models, chunk_size=2)
    clip = get_scorer("clip_i", demo_settings, models)
    assert isinstance(clip, ClipScorer)
    backbone = clip.backbone()
    assert backbone.image_forwards == 5 + 1 + 5
    assert backbone.text_forwards == 2
    dino = get_scorer("dino_i", demo_settings, models)
    assert isinstance(dino, DinoImageScorer) and dino.backbone().image_forwards == 5 + 1
    again = score_metrics(samples, names, demo_settings, models)
    assert backbone.image_forwards == 11 and backbone.text_forwards == 2
    for name in first:
        assert [v.value for v in first[name]] == [v.value for v in again[name]]
    assert sum(1 for key in models.loaded() if key[0] == "clip-backbone") == 1


def test_models_load_once_across_threads(demo_settings, monkeypatch):
    from masc_ui.metrics.clip import backbone as clip_backbone

    loads = []
    real = clip_backbone.load_clip_backbone
    monkeypatch.setattr(clip_backbone, "load_clip_backbone", lambda *a, **k: loads.append(a[0]) or real(*a, **k))
    models = ModelRegistry()
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            get_scorer("clip_i", demo_settings, models).score([Sample(refs=(_image(seed),), out=_image(seed + 1))])
        except BaseException as exc:  # collected and re-raised by the test thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(loads) == 1


def test_score_metrics_params_and_order(demo_settings):
    samples = [_sample(0)]
    got = score_metrics(samples, "clip_t,clip_i_seg", demo_settings, params={"clip_i_seg": {"margin": 0.0}})
    assert list(got) == ["clip_t", "clip_i_seg"]
    assert got["clip_i_seg"][0].provenance["params"]["margin"] == 0.0
    with pytest.raises(InputError, match="parameters given for metric 'clip_i_seg'"):
        score_metrics(samples, "clip_t", demo_settings, params={"clip_i_seg": {"margin": 0.0}})
    with pytest.raises(InputError, match="chunk_size"):
        score_metrics(samples, "clip_t", demo_settings, chunk_size=0)
    assert score_metrics([], "all", demo_settings) == {name: [] for name in NAMES}


def test_every_scorers_provenance_is_storable_as_is(demo_settings):
    """Storage keeps exactly six provenance keys and refuses others; scorer-specific details live in params."""
    from storage.record_types import Provenance

    models = ModelRegistry()
    settings = demo_settings.replace(dbpp_judge="local")  # the demo settings have no API key for the judge
    for spec in list_metrics():
        prov = get_scorer(spec.name, settings, models).provenance()
        assert set(prov) == {"model_id", "revision", "params", "code_version", "device", "dtype"}, spec.name
        Provenance.from_mapping(prov)
