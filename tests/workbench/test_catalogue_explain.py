"""Catalogue explanations (issue 13): VQAScore's question and P(Yes)/P(No), ITMScore's P(match), FaceSim's faces and
aligned crops, FaceScore's faces with scores; a metric that cannot apply says why. Real detection (the packaged
MTCNN detector of the demo profile) on a real photo of a person (`skimage.data.astronaut()`)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from masc_ui.analysis.numbers import format_value
from masc_ui.errors import InputError
from masc_ui.metrics.faces.alignment import aligned_face
from masc_ui.metrics.faces.drawing import BOX_COLOUR
from masc_ui.metrics.faces.mtcnn import MtcnnFaceDetector
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.vqa.questions import clip_flant5_question
from masc_ui.workbench import build_workbench
from masc_ui.workbench.catalogue_explain import EXPLAINERS, code_span
from masc_ui.workbench.users import AccessDenied

CATALOGUE = ["vqascore", "itmscore", "facesim", "facescore", "artscore"]
PROMPT = "an astronaut in front of a flag"


@pytest.fixture(scope="module")
def astronaut() -> Image.Image:
    data = pytest.importorskip("skimage.data")
    return Image.fromarray(data.astronaut())


@pytest.fixture()
def wb(demo_settings):
    bench = build_workbench(demo_settings)
    yield bench
    bench.close()


def test_vqascore_shows_the_exact_question_and_both_probabilities(wb, astronaut):
    sample = wb.scoring.make_sample([astronaut], astronaut.transpose(Image.FLIP_LEFT_RIGHT), PROMPT, "astronaut")
    report = wb.scoring.score(sample, CATALOGUE, user=None)
    vqa = wb.scoring.explain_catalogue(sample, CATALOGUE, user=None).items[0]
    value = report.values["vqascore"]
    assert vqa.metric == "vqascore" and vqa.value == pytest.approx(value.value)
    question = clip_flant5_question(PROMPT)
    assert question == f'Does this figure show "{PROMPT}"? Please answer yes or no.'
    text = vqa.markdown()
    assert f"`{question}`" in text
    shown = f"P(Yes) = {format_value(value.extras['p_yes'])} · P(No) = {format_value(value.extras['p_no'])}"
    assert shown in text  # significant digits, never 0.0000
    assert value.extras["p_yes"] == pytest.approx(value.value)
    assert "nan" not in text.lower()


def test_facesim_draws_the_faces_and_the_two_aligned_crops(wb, astronaut):
    out = astronaut.transpose(Image.FLIP_LEFT_RIGHT)
    sample = wb.scoring.make_sample([astronaut], out, PROMPT, "astronaut")
    explained = {e.metric: e for e in wb.scoring.explain_catalogue(sample, CATALOGUE, user=None).items}
    assert list(explained) == ["vqascore", "itmscore", "facesim", "facescore"]
    facesim = explained["facesim"]
    captions = [p.caption for p in facesim.pictures]
    assert captions == [
        "FaceSim: faces found in the reference",
        "FaceSim: faces found in the output (vs the reference)",
        "FaceSim: aligned 112×112 crop of the reference (what the recognizer reads)",
        "FaceSim: aligned 112×112 crop of the output (what the recognizer reads)",
    ]
    # The crops: the largest face an independent run of the same detector finds, aligned by its landmarks.
    for picture, image in zip(facesim.pictures[2:], (astronaut, out)):
        rgb = np.asarray(image)
        face = MtcnnFaceDetector().detect(rgb).largest
        assert face is not None
        assert picture.image.size == (112, 112)
        assert np.array_equal(np.asarray(picture.image), aligned_face(rgb, face.landmarks))
        drawn = np.asarray(facesim.pictures[0 if image is astronaut else 1].image)
        x0, y0 = (int(round(v)) for v in face.box[:2])
        assert tuple(drawn[y0 + 2, x0]) == BOX_COLOUR  # the box's left edge
    assert "5 landmarks (eyes, nose, mouth corners)" in facesim.markdown()
    assert "NOT the reference detector" in facesim.markdown()
    facescore = explained["facescore"]
    assert [p.caption for p in facescore.pictures] == ["FaceScore: each scored face with its score"]
    assert f"{facescore.value:.4f} at box" in facescore.markdown()


def test_no_face_says_why_never_nan(wb, astronaut):
    noise = Image.effect_noise((256, 256), 40).convert("RGB")
    sample = wb.scoring.make_sample([astronaut], noise, PROMPT, "astronaut")
    explained = {e.metric: e for e in wb.scoring.explain_catalogue(sample, ["facesim", "facescore"], user=None).items}
    assert explained["facesim"].value is None
    assert explained["facesim"].markdown().startswith("**FaceSim**: not computable: no face found in the output")
    assert [p.caption for p in explained["facesim"].pictures][-1].endswith(
        "crop of the reference (what the recognizer reads)"
    )
    assert explained["facescore"].value is None and "no face" in explained["facescore"].reason
    for e in explained.values():
        assert "nan" not in e.markdown().lower()


def test_no_face_in_real_dreambooth_photos(wb, shared_data):
    photos = sorted((shared_data / "dreambooth").rglob("*.jpg"))[:2] if (shared_data / "dreambooth").exists() else []
    if len(photos) < 2:
        pytest.skip("no DreamBooth photos under ../shared/data/dreambooth")
    sample = wb.scoring.make_sample([photos[0]], photos[1], "a photo of an object", None)
    facesim = wb.scoring.explain_catalogue(sample, ["facesim"], user=None).items[0]
    assert facesim.value is None and facesim.reason.startswith("no face found in")


def test_missing_prompt_is_a_reason(wb, astronaut):
    sample = wb.scoring.make_sample([astronaut], astronaut, None, None)
    vqa = wb.scoring.explain_catalogue(sample, ["vqascore"], user=None).items[0]
    assert vqa.value is None and "prompt" in vqa.reason and "nan" not in vqa.markdown().lower()


def test_explaining_after_run_computes_nothing_again(wb, astronaut):
    sample = wb.scoring.make_sample([astronaut], astronaut.transpose(Image.FLIP_LEFT_RIGHT), PROMPT, "astronaut")
    wb.scoring.score(sample, CATALOGUE, user=None)
    face_backbones = [get_scorer(name, wb.settings, wb.models).backbone() for name in ("facesim", "facescore")]
    before = [b.forwards for b in face_backbones]
    loaded = wb.models.loaded()
    wb.scoring.explain_catalogue(sample, CATALOGUE, user=None)
    assert [b.forwards for b in face_backbones] == before and wb.models.loaded() == loaded


def test_only_explainable_metrics_and_only_admins(demo_settings, astronaut):
    wb = build_workbench(demo_settings.replace(users="ada:pw-ada-1:admin,ron:pw-ron-1:rater"))
    try:
        sample = wb.scoring.make_sample([astronaut], astronaut, PROMPT, None)
        with pytest.raises(InputError, match="choose VQAScore, ITMScore, FaceSim, FaceScore"):
            wb.scoring.explain_catalogue(sample, ["cp", "clip_i"], user="ada")
        with pytest.raises(AccessDenied, match="needs an admin login"):
            wb.scoring.explain_catalogue(sample, ["vqascore"], user="ron")
        assert set(EXPLAINERS) == {"vqascore", "itmscore", "facesim", "facescore"}
    finally:
        wb.close()


def test_code_span_keeps_backticks_verbatim():
    assert code_span("a `b` c") == "``a `b` c``"
    assert code_span("`x`") == "`` `x` ``"
