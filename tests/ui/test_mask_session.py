"""Mask editing state: SAM clicks, boxes by two clicks, undo, candidates, sources."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.workbench.masks import MaskSession, target_names


@dataclass
class Prediction:
    masks: list
    scores: list
    best: int


class FakeSegmenter:
    """Candidate k = the k+1 leftmost columns per point; records what it was asked."""

    def __init__(self):
        self.calls = []

    def sam_predict(self, image, points, box):
        self.calls.append((list(points), box))
        h, w = image.height, image.width
        masks = []
        for k in range(3):
            m = np.zeros((h, w), dtype=bool)
            m[:, : len(points) + k + 1] = True
            masks.append(m)
        return Prediction(masks, [0.1, 0.9, 0.5], 1)


IMG = Image.new("RGB", (10, 8))


def test_clicks_predict_and_choose_the_best_candidate():
    s, seg = MaskSession(), FakeSegmenter()
    msg = s.click("ref0", IMG, 3, 4, "positive", seg.sam_predict)
    assert "candidate 2 of 3" in msg and s.sources["ref0"] == "sam"
    assert s.masks["ref0"][:, :3].all() and not s.masks["ref0"][:, 3:].any()
    s.click("ref0", IMG, 8, 1, "negative", seg.sam_predict)
    assert seg.calls[-1] == ([(3.0, 4.0, 1), (8.0, 1.0, 0)], None)
    s.choose("ref0", 2)
    assert s.masks["ref0"][:, :5].all()
    with pytest.raises(InputError, match="candidate 4 does not exist"):
        s.choose("ref0", 3)


def test_box_takes_two_clicks_and_undo_walks_back():
    s, seg = MaskSession(), FakeSegmenter()
    assert "first corner" in s.click("out", IMG, 7, 6, "box", seg.sam_predict)
    assert not seg.calls and s.prompts["out"].pending_corner == (7, 6)
    s.click("out", IMG, 2, 1, "box", seg.sam_predict)
    assert seg.calls[-1] == ([], (2, 1, 7, 6))  # normalised x0 <= x1, y0 <= y1
    s.click("out", IMG, 5, 5, "positive", seg.sam_predict)
    s.undo("out", IMG, seg.sam_predict)
    assert seg.calls[-1] == ([], (2, 1, 7, 6))
    assert "cleared" in s.undo("out", IMG, seg.sam_predict)
    assert "out" not in s.masks
    assert s.undo("out", IMG, seg.sam_predict) == "nothing to undo"


def test_clicks_outside_the_image_and_unknown_modes_are_refused():
    s, seg = MaskSession(), FakeSegmenter()
    with pytest.raises(InputError, match="outside the 10x8 image"):
        s.click("ref0", IMG, 10, 2, "positive", seg.sam_predict)
    with pytest.raises(InputError, match="positive, negative or box"):
        s.click("ref0", IMG, 1, 2, "lasso", seg.sam_predict)


def test_set_mask_clear_and_targets():
    s = MaskSession()
    s.set_mask("ref1", np.ones((2, 2)), "drawn")
    assert s.masks["ref1"].dtype == bool and s.sources["ref1"] == "drawn"
    with pytest.raises(ValueError, match="mask source"):
        s.set_mask("ref1", np.ones((2, 2)), "magic")
    s.clear("ref1")
    assert not s.masks and not s.sources
    assert target_names(2) == [("reference 1", "ref0"), ("reference 2", "ref1"), ("output", "out")]


def test_uploads_are_decoded_once_per_session_and_forgotten_when_gone(tmp_path):
    from masc_ui.imaging import open_image
    from masc_ui.workbench.masks import Uploads

    a, b = tmp_path / "a.png", tmp_path / "b.png"
    Image.new("RGB", (6, 4), (1, 2, 3)).save(a)
    Image.new("RGB", (6, 4), (3, 2, 1)).save(b)
    decoded = []

    def decode(path, name):
        decoded.append(path)
        return open_image(path, name=name)

    uploads = Uploads()
    first = uploads.get(str(a), "reference image 1", decode)
    assert uploads.get(str(a), "reference image 1", decode) is first and decoded == [str(a)]
    uploads.get(str(b), "output image", decode)
    uploads.keep_only([str(b), None])
    assert uploads.get(str(a), "reference image 1", decode) is not first and decoded == [str(a), str(b), str(a)]
    with pytest.raises(InputError, match="file not found"):
        uploads.get(str(tmp_path / "gone.png"), "output image", decode)
