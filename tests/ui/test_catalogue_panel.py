"""The Score tab's catalogue pieces, called directly: metric choices with sizes, preset buttons, the catalogue
explanation handler, and the role gate around every endpoint they register (admins only)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import gradio as gr
import pytest
from gradio.context import LocalContext
from PIL import Image

from masc_ui.metrics.registry import get_spec, list_metrics
from masc_ui.ui import catalogue_panel, preset_buttons
from masc_ui.ui.roles import guard_endpoints
from masc_ui.ui.staleness import NOTHING, ResultOutputs
from masc_ui.workbench import Workbench, build_workbench, sample_fingerprint
from masc_ui.workbench.model_sizes import metric_size_text

USERS = "ada:pw-ada-1:admin,ron:pw-ron-1:rater"
PROMPT = "an astronaut in front of a flag"


@pytest.fixture(scope="module")
def astronaut(tmp_path_factory) -> str:
    data = pytest.importorskip("skimage.data")
    path = tmp_path_factory.mktemp("faces") / "astronaut.png"
    Image.fromarray(data.astronaut()).save(path)
    return str(path)


@pytest.fixture()
def wb(demo_settings):
    bench = build_workbench(demo_settings.replace(users=USERS))
    yield bench
    bench.close()


def _sample_of(wb: Workbench):
    def sample_of(ref, extra, out, prompt_text, subject_text, session):
        return wb.scoring.make_sample([ref], out, prompt_text, subject_text)

    return sample_of


def _explain(wb: Workbench) -> tuple[Callable[..., dict], SimpleNamespace]:
    """The Explain handler of a panel built in a page of its own, and the components its answers are keyed by
    (the panel's and the Score tab's status line, fingerprints and "out of date" note under Run)."""
    with gr.Blocks():
        fields = [gr.Textbox(), gr.File(), gr.Textbox(), gr.Textbox(), gr.Textbox(), gr.State(None)]
        metrics = gr.CheckboxGroup(catalogue_panel.metric_choices(wb, list_metrics()), label="Metrics")
        tab = SimpleNamespace(status=gr.Markdown(), computed=gr.State(NOTHING), stale=gr.HTML())
        tab.panel = catalogue_panel.build(wb, _sample_of(wb), fields, metrics, tab.status, tab.computed, tab.stale)
    score = ResultOutputs(tab.status, tab.computed, tab.stale)
    handler = catalogue_panel.explain_handler(wb, _sample_of(wb), tab.panel, score)
    return handler, tab


def _app(wb: Workbench) -> gr.Blocks:
    with gr.Blocks() as app:
        fields = [gr.Textbox(), gr.File(), gr.Textbox(), gr.Textbox(), gr.Textbox(), gr.State(None)]
        metrics = gr.CheckboxGroup(catalogue_panel.metric_choices(wb, list_metrics()), label="Metrics")
        preset_buttons.build(wb, metrics, fields[-1])
        catalogue_panel.build(wb, _sample_of(wb), fields, metrics, gr.Markdown(), gr.State(NOTHING), gr.HTML())
    guard_endpoints(app, wb)
    return app


def _progress(fraction=None, desc=None):
    return None


def test_choices_show_each_models_size(wb):
    choices = dict((name, label) for label, name in catalogue_panel.metric_choices(wb, list_metrics()))
    assert choices["vqascore"] == f"VQAScore · {metric_size_text(get_spec('vqascore'), wb.settings)}"
    assert choices["vqascore"].startswith("VQAScore · demo checkpoint ") and choices["vqascore"].endswith(" MB")


def test_explain_handler_returns_the_question_and_the_face_crops(wb, astronaut):
    handler, tab = _explain(wb)
    request = SimpleNamespace(username="ada")
    shown = handler(
        astronaut,
        None,
        astronaut,
        PROMPT,
        "astronaut",
        None,
        ["cp", "vqascore", "facesim"],
        NOTHING,
        request=request,
        progress=_progress,
    )
    notes, pictures = shown[tab.panel.notes], shown[tab.panel.pictures]
    assert 'Does this figure show "an astronaut in front of a flag"? Please answer yes or no.' in notes
    assert "P(Yes) = " in notes and "P(No) = " in notes
    assert [img.size for img, caption in pictures if "aligned 112×112 crop" in caption] == [(112, 112), (112, 112)]
    assert "models loaded" in shown[tab.status]
    sample = _sample_of(wb)(astronaut, None, astronaut, PROMPT, "astronaut", None)
    assert shown[tab.computed] == (None, None, sample_fingerprint(sample), None)
    assert shown[tab.stale] == shown[tab.panel.stale] == ""


def test_explain_handler_turns_bad_input_into_a_message(wb, astronaut):
    handler, tab = _explain(wb)
    before = ("run", "maps", "catalogue", "sensitivity")
    shown = handler(
        astronaut,
        None,
        astronaut,
        PROMPT,
        None,
        None,
        ["clip_i"],
        before,
        request=SimpleNamespace(username="ada"),
        progress=_progress,
    )
    assert shown[tab.panel.pictures] == []
    assert shown[tab.panel.notes].startswith("⚠ none of the chosen metrics has a catalogue explanation")
    # the explanation shown is gone, and so is its fingerprint; the note under Run is left as it is
    assert shown[tab.computed] == ("run", "maps", None, "sensitivity") and tab.stale not in shown
    shown = handler(
        astronaut,
        None,
        astronaut,
        PROMPT,
        None,
        None,
        ["vqascore"],
        before,
        request=SimpleNamespace(username="ron"),
        progress=_progress,
    )
    assert shown[tab.panel.pictures] == []
    assert shown[tab.panel.notes].startswith("⚠ explaining scores needs an admin login")


def test_every_catalogue_endpoint_refuses_a_rater(wb):
    app = _app(wb)
    endpoints = {fn.api_name: fn.fn for fn in app.fns.values() if isinstance(fn.api_name, str)}
    assert set(endpoints) >= {"explain_catalogue", "preset_subject", "preset_prompt", "preset_quality"}
    for name, fn in endpoints.items():
        token = LocalContext.request.set(SimpleNamespace(username="ron", client=None, headers={}))
        try:
            with pytest.raises(gr.Error, match="needs an admin login"):
                fn() if name.startswith("preset_") else fn(*([None] * 7), request=None, progress=_progress)
        finally:
            LocalContext.request.reset(token)
    token = LocalContext.request.set(SimpleNamespace(username="ada", client=None, headers={}))
    try:
        assert _preset_answer(endpoints["preset_quality"]()) == (["pickscore", "facescore", "artscore"], "")
        assert _preset_answer(endpoints["preset_prompt"]()) == (["pf", "clip_t", "vqascore", "itmscore"], "")
        ticked, note = _preset_answer(endpoints["preset_dreambench"]())
        assert ticked == ["dino_i", "clip_i", "clip_t"] and "DreamBench++ CP, DreamBench++ PF are not offered" in note
        assert _preset_answer(endpoints["preset_all"]()) == ([s.name for s in wb.scoring.metric_specs()], "")
    finally:
        LocalContext.request.reset(token)


def _preset_answer(out: dict) -> tuple[list[str], str]:
    """(the metrics ticked, the note) of a preset button's answer, a dict keyed by component."""
    by_kind = {type(component): value for component, value in out.items()}
    assert set(by_kind) == {gr.CheckboxGroup, gr.Markdown}
    return by_kind[gr.CheckboxGroup], by_kind[gr.Markdown]


def test_presets_follow_the_metrics_offered_for_a_loaded_video(wb):
    with_video = SimpleNamespace(video=SimpleNamespace(loaded=True))
    with gr.Blocks():
        metrics = gr.CheckboxGroup()
        note = gr.Markdown()

    def preset(name, session):
        return _preset_answer(preset_buttons.preset_handler(wb, name, metrics, note)(session))

    token = LocalContext.request.set(SimpleNamespace(username="ada", client=None, headers={}))
    try:
        every, _ = preset("all", with_video)
        assert every == [s.name for s in wb.scoring.metric_specs(video=True)] and "motion" in every
        ticked, note_text = preset("opens2v", with_video)
        assert ticked == ["aesthetic", "motion", "facesim", "gmescore", "nexusscore"]
        assert "score videos only" not in note_text and "NaturalScore, OpenS2V Total are not offered" in note_text
        ticked, note_text = preset("opens2v", None)
        assert ticked == ["aesthetic", "facesim"] and "score videos only: load an output video" in note_text
    finally:
        LocalContext.request.reset(token)
