"""Memory under the pixel limit: the decoded images a Score-tab page session holds stay within a total pixel budget
(`MASC_MAX_SESSION_PIXELS`, checked from the file header before decoding), a sample takes at most
`MASC_MAX_REFERENCES` references, and a closed page's decoded images are released at once."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import gradio as gr
import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.ui import mask_panel
from masc_ui.ui.score_actions import sample_on_screen
from masc_ui.workbench import build_workbench
from masc_ui.workbench.masks import MaskSession


def _png(path, size, seed=0) -> str:
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path)
    return str(path)


@pytest.fixture()
def wb(demo_settings):
    bench = build_workbench(
        dataclasses.replace(
            demo_settings,
            max_image_pixels=150_000,
            max_video_pixels=150_000,
            max_session_pixels=220_000,
            max_references=3,
        )
    )
    yield bench
    bench.close()


def test_the_session_budget_refuses_an_image_before_decoding_it_and_frees_what_leaves(wb, tmp_path, monkeypatch):
    session = MaskSession()
    a, b = _png(tmp_path / "a.png", (300, 300), 1), _png(tmp_path / "b.png", (300, 300), 2)
    big = _png(tmp_path / "big.png", (400, 300), 3)
    mask_panel.session_image(wb, session, a, "reference image 1")
    mask_panel.session_image(wb, session, b, "reference image 2")
    assert session.uploads.pixels_held() == 180_000
    decoded = []
    monkeypatch.setattr(wb.scoring, "load_image", lambda src, name: decoded.append(name))
    with pytest.raises(InputError) as refused:
        mask_panel.session_image(wb, session, big, "reference image 3")
    assert str(refused.value) == (
        "reference image 3 (400x300) is not taken: with it the images on screen would hold 0.3 MP decoded, "
        "over this page's budget of 0.22 MP (MASC_MAX_SESSION_PIXELS); remove some references or upload smaller images"
    )
    assert decoded == [] and session.uploads.pixels_held() == 180_000  # never decoded, not kept
    monkeypatch.undo()
    session.uploads.keep_only([a])  # b left the screen: its pixels are free again
    assert mask_panel.session_image(wb, session, big, "reference image 2").size == (400, 300)
    assert session.uploads.pixels_held() == 90_000 + 120_000  # a and big


def test_a_sample_takes_at_most_the_configured_references(wb, tmp_path):
    paths = [_png(tmp_path / f"r{i}.png", (64, 64), i) for i in range(5)]
    out = _png(tmp_path / "out.png", (64, 64), 9)
    session = MaskSession()
    found, notes = mask_panel.images_on_screen(wb, session, paths[0], paths[1:], out)
    assert [k for k, v in found.items() if v is not None] == ["ref0", "ref1", "ref2", "out"]
    assert notes["ref3"] == [
        "⚠ reference image 4 is not taken: a sample takes at most 3 reference images (MASC_MAX_REFERENCES) and 5 "
        "were given; remove 2 of the extra references"
    ]
    with pytest.raises(InputError, match="at most 3 reference images"):
        sample_on_screen(wb, session, paths[0], paths[1:], out, "a dog", "dog")
    with pytest.raises(InputError, match="at most 3 reference images"):
        wb.scoring.make_sample(paths, out, "a dog", "dog")


def test_a_closed_page_releases_its_decoded_images(wb, tmp_path):
    session = MaskSession()
    mask_panel.session_image(wb, session, _png(tmp_path / "a.png", (300, 300)), "reference image 1")
    with gr.Blocks() as app:
        pass
    handler = mask_panel.release_on_unload(app)
    assert any(
        any(t[1] == "unload" for t in fn.targets) and fn.fn is handler for fn in app.fns.values()
    )  # registered as the page's unload event
    app.state_holder = SimpleNamespace(session_data={"page-1": SimpleNamespace(state_data={7: session, 8: "x"})})
    handler(SimpleNamespace(session_hash="page-2"))  # another page: nothing of this one is released
    assert session.uploads.pixels_held() == 90_000
    handler(SimpleNamespace(session_hash="page-1"))
    assert session.uploads.pixels_held() == 0
