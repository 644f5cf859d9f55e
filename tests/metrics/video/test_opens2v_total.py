"""OpenS2V-Eval's Total Score: the leaderboard's weighting and normalisation (checked against the release's own
published numbers), per video and over a benchmark, and the scorer computing or reusing its components."""

import math

import numpy as np
import pytest

import masc_ui.metrics.registry as registry
from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.imaging import open_image, open_video
from masc_ui.metrics.base import MetricSpec
from masc_ui.metrics.registry import get_scorer, metrics_for, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.metrics.video import motion
from masc_ui.metrics.video.opens2v_total import benchmark_total, total_score
from masc_ui.metrics.video.sample import VideoSample
from masc_ui.models.loaded_models import ModelRegistry
from tests.openai_server import FakeOpenAI
from tests.video_files import encode_video, synthetic_frames

OPEN = {"aesthetic": 0.12, "motion": 0.12, "facesim": 0.20, "gmescore": 0.12, "nexusscore": 0.20, "naturalscore": 0.24}
"""The release's Open-Domain weights (merge_result.py), written again."""


def _raw_from_published():
    """Raw component values whose normalisation gives the release's published v1.0 demo result
    (leaderboard/file_v1.0/model_name_Open-Domain.json)."""
    return {
        "aesthetic": 4 + 3 * 0.3343864281972249,
        "motion": 0.1945268139243126,
        "facesim": 0.9420197624713182,
        "gmescore": 0.6767578125,
        "nexusscore": 0.05 * 0.260009765625,
        "naturalscore": 0.6666666666666667,
    }


def test_the_total_of_the_published_components_is_the_published_total():
    value, reason, extras = total_score(_raw_from_published())
    assert reason is None and value == pytest.approx(0.5450864321738482, abs=1e-12)
    assert extras["normalised"]["aesthetic"] == pytest.approx(0.3343864281972249)
    assert extras["normalised"]["nexusscore"] == pytest.approx(0.260009765625)
    assert extras["weights"] == OPEN and extras["left_out"] == []


def test_the_benchmark_total_of_the_release_demo_outputs():
    """The release's demo per-video outputs (eval/demo_result/model_name_output_json): their normalised means are the
    published ones (aesthetics and NexusScore set to give the published means, the demo files of those two having
    changed since); a NexusScore of 0 is left out of its mean, as the release does."""
    videos = [
        {
            "motion": 0.35025984048843384,
            "gmescore": 0.68115234375,
            "naturalscore": (4 - 1) / 4,
            "nexusscore": 0.0130048828125,
        },
        {
            "motion": 0.038793787360191345,
            "gmescore": 0.67236328125,
            "facesim": 0.9420197624713182,
            "naturalscore": ((3 + 3 + 4) / 3 - 1) / 4,
            "nexusscore": 0.0,
            "aesthetic": 4 + 3 * 0.3343864281972249,
        },
    ]
    got = benchmark_total(videos)
    assert got["motion"] == pytest.approx(0.1945268139243126) and got["gmescore"] == pytest.approx(0.6767578125)
    assert got["facesim"] == pytest.approx(0.9420197624713182) and got["naturalscore"] == pytest.approx(2 / 3)
    assert got["nexusscore"] == pytest.approx(0.260097656) and got["aesthetic"] == pytest.approx(0.3343864281972249)
    assert got["total"] == pytest.approx(sum(OPEN[k] * got[k] for k in OPEN))
    nothing = benchmark_total([{}])  # the release averages to 0 in its own units, then normalises
    assert nothing["aesthetic"] == pytest.approx(-4 / 3) and nothing["naturalscore"] == -0.25
    assert nothing["total"] == pytest.approx(0.12 * -4 / 3 + 0.24 * -0.25) and nothing["motion"] == 0.0


def test_clips_and_normalisations():
    _, _, extras = total_score(
        {"aesthetic": 8.0, "motion": -1.7, "facesim": 1.2, "gmescore": -0.25, "nexusscore": 0.2, "naturalscore": 1.3}
    )
    assert extras["normalised"] == {
        "aesthetic": 1.0,
        "motion": 1.0,
        "facesim": 1.0,
        "gmescore": -0.25,
        "nexusscore": 1.0,
        "naturalscore": 1.0,
    }
    _, _, low = total_score({**_raw_from_published(), "aesthetic": 3.0, "motion": -0.4})
    assert low["normalised"]["aesthetic"] == 0.0 and low["normalised"]["motion"] == pytest.approx(0.4)


def test_absent_facesim_and_nexusscore_are_left_out_and_the_weights_rescaled():
    raw = _raw_from_published()
    normalised = total_score(raw)[2]["normalised"]
    value, reason, extras = total_score({**raw, "facesim": math.nan, "nexusscore": 0.0})
    kept = {k: w for k, w in OPEN.items() if k not in ("facesim", "nexusscore")}
    assert reason is None and extras["left_out"] == ["facesim", "nexusscore"]
    assert value == pytest.approx(sum(w * normalised[k] for k, w in kept.items()) / sum(kept.values()))
    assert sum(extras["weights_used"].values()) == pytest.approx(1.0)
    nan, why, _ = total_score({**raw, "naturalscore": None, "gmescore": math.nan})
    assert math.isnan(nan) and why == "the OpenS2V Total needs gmescore, naturalscore, which are NaN"


def test_the_human_domain_has_its_own_weights():
    raw = _raw_from_published()
    normalised = total_score(raw)[2]["normalised"]
    human = {"aesthetic": 0.15, "motion": 0.15, "facesim": 0.25, "gmescore": 0.15, "naturalscore": 0.30}
    value, _, extras = total_score({**raw, "nexusscore": math.nan}, "human")
    assert value == pytest.approx(sum(w * normalised[k] for k, w in human.items())) and extras["left_out"] == []
    with pytest.raises(InputError, match="domain must be one of open, human"):
        total_score(raw, "single")


@pytest.fixture()
def with_aesthetic(monkeypatch):
    """The registry with an `aesthetic` metric: the real one when installed, else ArtScore standing in for it."""
    if "aesthetic" not in registry._SPECS:
        spec = MetricSpec(
            "aesthetic", "Aesthetics (stand-in)", (-math.inf, math.inf), True, "ArtScore here", "-", family="quality"
        )
        entry = (spec, "masc_ui.metrics.quality.artscore:ArtScoreScorer")
        monkeypatch.setattr(registry, "_METRICS", (*registry._METRICS, entry))
        monkeypatch.setitem(registry._SPECS, "aesthetic", spec)
        monkeypatch.setitem(registry._FACTORIES, "aesthetic", entry[1])


@pytest.fixture()
def without_aesthetic(monkeypatch):
    monkeypatch.setattr(registry, "_METRICS", tuple(m for m in registry._METRICS if m[0].name != "aesthetic"))
    monkeypatch.delitem(registry._SPECS, "aesthetic", raising=False)
    monkeypatch.delitem(registry._FACTORIES, "aesthetic", raising=False)


@pytest.fixture()
def server():
    fake = FakeOpenAI()
    yield fake
    fake.close()


@pytest.fixture()
def settings(demo_settings, server):
    return demo_settings.replace(judge_base_url=server.url, judge_api_key="k", judge_backoff_s=0.01)


def _sample(frames: int, seed: int = 0) -> Sample:
    ref = np.random.default_rng(seed).integers(0, 256, (48, 48, 3), dtype=np.uint8)
    video = open_video(encode_video(synthetic_frames(frames), "mp4"), name=f"clip{frames}")
    return Sample(refs=(open_image(ref),), out=video, prompt="a green square moving right", subject="square")


def test_the_scorer_equals_its_components_combined_and_reuses_them(with_aesthetic, settings, server, monkeypatch):
    models = ModelRegistry()
    samples = [_sample(12), _sample(20, seed=1)]
    parts = {name: score_metrics(samples, [name], settings, models)[name] for name in OPEN}
    asked = len(server.requests)
    assert asked == 6  # NaturalScore: 3 calls per video
    calls = []
    original = motion.MotionScorer._score_video
    monkeypatch.setattr(motion.MotionScorer, "_score_video", lambda self, *a: calls.append(1) or original(self, *a))
    got = score_metrics(samples, ["motion", "naturalscore", "opens2v_total"], settings, models)
    assert len(calls) == 2 and len(server.requests) == asked + 6  # motion and naturalscore once, for both metrics
    for k in range(2):
        total = got["opens2v_total"][k]
        expected, _, extras = total_score({name: parts[name][k].value for name in OPEN})
        assert total.value == pytest.approx(expected) and math.isfinite(total.value)
        assert total.extras["components"] == extras["components"]
        assert "facesim" in total.extras["left_out"] and "no face" in total.extras["component_reasons"]["facesim"]
    prov = got["opens2v_total"][0].provenance
    assert prov["model_id"] == "opens2v-total" and prov["revision"] == "OpenS2V-Eval v1.0"
    assert set(prov["params"]["components"]) == set(OPEN) and prov["params"]["weights"] == OPEN
    alone = [score_metrics([s], ["opens2v_total"], settings, models)["opens2v_total"][0] for s in samples]
    assert [v.value for v in alone] == pytest.approx([v.value for v in got["opens2v_total"]])
    human = get_scorer("opens2v_total", settings, models, domain="human")
    assert (
        "nexusscore"
        not in human.score([VideoSample(video=samples[0].out, refs=samples[0].refs, prompt="x")])[0].extras["weights"]
    )


def test_without_every_component_it_is_left_out_of_all_and_refused_by_name(without_aesthetic, settings):
    sample = _sample(8)
    assert "opens2v_total" not in {s.name for s in metrics_for([sample], settings)}
    assert "motion" in {s.name for s in metrics_for([sample], settings)}
    with pytest.raises(ModelUnavailableError, match="the OpenS2V Total needs the metric\\(s\\) aesthetic"):
        score_metrics([sample], ["opens2v_total"], settings)


def test_it_is_left_out_of_all_while_naturalscore_cannot_be_asked(with_aesthetic, demo_settings):
    sample = _sample(8)
    assert "opens2v_total" not in {s.name for s in metrics_for([sample], demo_settings)}
    keyed = demo_settings.replace(judge_api_key="k")
    assert "opens2v_total" in {s.name for s in metrics_for([sample], keyed)}


def test_bad_input_gets_a_clear_error(with_aesthetic, settings):
    with pytest.raises(InputError, match="metric opens2v_total has no parameter"):
        get_scorer("opens2v_total", settings, weights={})
    with pytest.raises(InputError, match="domain must be one of open, human"):
        get_scorer("opens2v_total", settings, domain="single")
    no_prompt = Sample(refs=_sample(8).refs, out=_sample(8).out)
    with pytest.raises(InputError, match="opens2v_total needs prompt, which sample 0 lacks"):
        score_metrics([no_prompt], ["opens2v_total"], settings)
    image = Sample(refs=(), out=np.zeros((8, 8, 3), np.uint8), prompt="x")
    assert (
        "judges videos" in score_metrics([image], ["opens2v_total"], settings, missing="nan")["opens2v_total"][0].reason
    )
    with pytest.raises(InputError, match="opens2v_total scores videos: sample 0 is a Sample"):
        get_scorer("opens2v_total", settings).score([image])
