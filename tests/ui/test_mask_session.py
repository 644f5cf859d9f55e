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


class Img:
    """An image as the session sees it: a size and a content hash."""

    def __init__(self, sha: str, size=(10, 8)):
        self.sha256, self.size = sha, size
        self.width, self.height = size


def _mask(cols: int, size=(10, 8)) -> np.ndarray:
    m = np.zeros(size[::-1], dtype=bool)
    m[:, :cols] = True
    return m


def test_another_tools_result_is_offered_not_applied_and_undo_walks_back():
    s, img = MaskSession(), Img("a")
    s.set_mask("ref0", _mask(4), "drawn", img)
    msg = s.offer("ref0", _mask(1), "text-prompted", img)
    assert "not applied yet" in msg and "replace the current brush mask (32 px)" in msg
    assert s.masks["ref0"].sum() == 32 and s.sources["ref0"] == "drawn"  # the drawing is kept
    assert "discarded" in s.discard_pending("ref0") and not s.pending
    s.offer("ref0", _mask(1), "text-prompted", img)
    assert "applied" in s.apply_pending("ref0", img)
    assert s.masks["ref0"].sum() == 8 and s.sources["ref0"] == "text-prompted"
    assert "back to the brush mask (32 px)" in s.undo_mask("ref0")
    assert s.masks["ref0"].sum() == 32 and s.sources["ref0"] == "drawn"
    assert "no mask again" in s.undo_mask("ref0") and "ref0" not in s.masks
    assert "no earlier mask" in s.undo_mask("ref0")


def test_doubtful_masks_are_always_offered_and_a_tool_refines_its_own_mask():
    s, img = MaskSession(), Img("a")
    msg = s.offer("out", np.zeros((8, 10), bool), "text-prompted", img, doubtful="no instance of 'cat' found")
    assert msg.startswith("⚠ doubtful mask (0 px), not applied: no instance of 'cat' found") and "out" not in s.masks
    assert "applied" in s.offer("out", _mask(3), "sam", img) and s.sources["out"] == "sam"
    assert "applied" in s.offer("out", _mask(5), "sam", img) and s.masks["out"].sum() == 40


def test_masks_belong_to_their_image():
    s = MaskSession()
    a, b = Img("a"), Img("b")
    s.set_mask("ref0", _mask(4), "imported", a)
    s.set_mask("out", _mask(2), "imported", a)
    assert s.mask_of("ref0", a) is not None and s.mask_of("ref0", b) is None
    assert s.keep_for({"ref0": "b", "out": "a"}) == ["ref0"]  # reference 1 is another image now
    assert "ref0" not in s.masks and "ref0" not in s.history and s.masks["out"].sum() == 16
    with pytest.raises(InputError, match="a 10x8 mask cannot belong to a 20x8 image"):
        s.set_mask("out", _mask(2), "drawn", Img("c", (20, 8)))
    s.stored_sample = 3
    s.reset()
    assert not s.masks and s.stored_sample is None


def test_sam_clicks_over_a_drawn_mask_stay_a_proposal_until_applied():
    s, seg = MaskSession(), FakeSegmenter()
    s.set_mask("ref0", _mask(6), "drawn")
    msg = s.click("ref0", IMG, 3, 4, "positive", seg.sam_predict)
    assert "candidate 2 of 3" in msg and "not applied yet" in msg and s.sources["ref0"] == "drawn"
    assert "discarded" in s.undo("ref0", IMG, seg.sam_predict) and s.masks["ref0"].sum() == 48


def test_unsaved_masks_are_replaced_only_on_a_second_ask():
    s, img = MaskSession(), Img("a")
    assert s.confirm_replace("example:cat", "loading example 'Cat'", "Load example") is None  # nothing to lose
    s.set_mask("ref0", _mask(4), "imported", img, undoable=False)
    s.set_mask("out", _mask(2), "imported", img, undoable=False)
    s.mark_saved()  # an example's (or a stored sample's) masks: replacing them loses nothing
    assert s.unsaved() == [] and s.confirm_replace("open:3", "opening sample #3", "Open") is None
    s.set_mask("out", _mask(6), "drawn", img)
    assert s.unsaved() == ["out"]
    msg = s.confirm_replace("open:3", "opening sample #3", "Open in the Score tab")
    assert msg == (
        "not done yet: opening sample #3 would replace masks you made and have not saved (the output: "
        "brush mask, 48 px). Press 'Open in the Score tab' again to replace them, or press Save in the "
        "Score tab first to keep them"
    )
    assert s.confirm_replace("example:cat", "loading example 'Cat'", "Load example") is not None  # another action
    assert s.confirm_replace("example:cat", "loading example 'Cat'", "Load example") is None  # asked twice
    s.confirm_replace("open:3", "opening sample #3", "Open")
    s.set_mask("ref0", _mask(5), "drawn", img)  # a change after the warning: it is asked again
    assert "reference 1: brush mask, 40 px; the output: brush mask, 48 px" in s.confirm_replace("open:3", "o", "Open")
    s.undo_mask("ref0")
    s.undo_mask("out")  # back to the masks loaded: nothing unsaved
    assert s.unsaved() == [] and s.confirm_replace("open:3", "o", "Open") is None
    s.set_mask("out", _mask(7), "sam", img)
    s.mark_saved()  # Save
    assert s.confirm_replace("open:3", "o", "Open") is None
    s.set_mask("out", _mask(1), "drawn", img)
    s.reset()
    assert s.unsaved() == [] and s.warned is None and not s.saved
