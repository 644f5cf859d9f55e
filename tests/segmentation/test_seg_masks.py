"""Mask utilities: editor values, mask files of every mode, resizing, clean-up, PNG, overlays."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.segmentation.masks import (
    clean_mask,
    mask_fraction,
    mask_from_editor,
    mask_from_file,
    mask_from_png,
    mask_to_png,
    overlay_mask,
    resize_mask,
)


def _square(h=20, w=30) -> np.ndarray:
    m = np.zeros((h, w), dtype=bool)
    m[5:15, 8:20] = True
    return m


def _png(img: Image.Image, fmt: str = "PNG", **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt, **kw)
    return buf.getvalue()


# --- editor ---------------------------------------------------------------------------------------------------


def _layer(h=20, w=30, box=(5, 15, 8, 20), alpha=255, rgb=(255, 0, 0)) -> np.ndarray:
    layer = np.zeros((h, w, 4), dtype=np.uint8)
    y0, y1, x0, x1 = box
    layer[y0:y1, x0:x1, :3] = rgb
    layer[y0:y1, x0:x1, 3] = alpha
    return layer


def test_editor_numpy_layers_alpha_is_the_mask():
    value = {
        "background": np.zeros((20, 30, 3), np.uint8),
        "layers": [_layer(alpha=40, rgb=(0, 0, 0))],
        "composite": np.zeros((20, 30, 4), np.uint8),
    }
    mask = mask_from_editor(value)
    assert mask.dtype == bool and mask.shape == (20, 30)
    np.testing.assert_array_equal(mask, _square())  # faint black strokes count: any painted pixel


def test_editor_union_of_layers_pil_and_files(tmp_path):
    first = _layer(box=(0, 2, 0, 3))
    second = Image.fromarray(_layer(box=(18, 20, 27, 30)), mode="RGBA")
    path = tmp_path / "layer.png"
    Image.fromarray(_layer(box=(10, 11, 10, 11)), mode="RGBA").save(path)
    mask = mask_from_editor(
        {"background": None, "layers": [first, second, str(path)], "composite": None}, size=(30, 20)
    )
    assert mask.sum() == 6 + 6 + 1
    assert mask[0, 0] and mask[19, 29] and mask[10, 10]


def test_editor_layers_are_resized_to_the_image():
    mask = mask_from_editor({"background": None, "layers": [_layer()], "composite": None}, size=(60, 40))
    assert mask.shape == (40, 60)
    np.testing.assert_array_equal(mask, np.kron(_square(), np.ones((2, 2), dtype=bool)))


def test_editor_without_strokes_is_empty():
    mask = mask_from_editor({"background": Image.new("RGB", (30, 20)), "layers": [], "composite": None})
    assert mask.shape == (20, 30) and not mask.any()


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "must be a dict"),
        ({"background": None}, "must be a dict"),
        ({"background": None, "layers": [], "composite": None}, "upload an image"),
        ({"background": None, "layers": [np.zeros((20, 30, 3), np.uint8)], "composite": None}, "image_mode='RGBA'"),
        ({"background": None, "layers": [Image.new("RGB", (30, 20))], "composite": None}, "no transparency"),
        ({"background": None, "layers": [42], "composite": None}, "expected a numpy array"),
    ],
)
def test_editor_bad_values(value, message):
    with pytest.raises(InputError, match=message):
        mask_from_editor(value)


# --- mask files -----------------------------------------------------------------------------------------------


def _files() -> dict[str, bytes]:
    """The same 20x30 square mask saved in each mode."""
    sq = _square()
    grey = Image.fromarray(sq.astype(np.uint8) * 255, mode="L")
    la = Image.merge("LA", (Image.new("L", (30, 20), 0), grey))  # black strokes on transparency
    rgba = Image.fromarray(np.dstack([np.zeros((20, 30, 3), np.uint8), sq.astype(np.uint8) * 255]), mode="RGBA")
    palette = grey.convert("P")
    pal_transparent = Image.fromarray(sq.astype(np.uint8), mode="P")
    pal_transparent.putpalette([0, 0, 0, 255, 255, 255])
    pal_transparent.info["transparency"] = 0
    i16 = Image.fromarray(sq.astype(np.uint16) * 65535)
    return {
        "L": _png(grey),
        "LA": _png(la),
        "RGB": _png(grey.convert("RGB")),
        "RGBA": _png(rgba),
        "P": _png(palette),
        "P+transparency": _png(pal_transparent, transparency=0),
        "I;16": _png(i16),
        "1": _png(grey.convert("1")),
        "JPEG": _png(grey.convert("RGB"), "JPEG", quality=90),
    }


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA", "P", "P+transparency", "I;16", "1", "JPEG"])
def test_mask_files_of_every_mode(mode):
    data = _files()[mode]
    np.testing.assert_array_equal(mask_from_file(data), _square())
    resized = mask_from_file(data, size=(60, 40))
    np.testing.assert_array_equal(resized, np.kron(_square(), np.ones((2, 2), dtype=bool)))


def test_opaque_rgba_falls_back_to_grey_level():
    sq = _square()
    rgba = np.dstack([np.repeat(sq[..., None].astype(np.uint8) * 255, 3, axis=2), np.full((20, 30), 255, np.uint8)])
    np.testing.assert_array_equal(mask_from_file(_png(Image.fromarray(rgba, mode="RGBA"))), sq)


def test_dim_16_bit_labels_are_background():
    low = Image.fromarray(_square().astype(np.uint16) * 1000)  # far below half of 65535
    assert not mask_from_file(_png(low)).any()


@pytest.mark.parametrize("data, message", [(b"", "empty"), (b"not an image", "not an image")])
def test_bad_mask_files(data, message):
    with pytest.raises(InputError, match=message):
        mask_from_file(data)


# --- resize / clean / png / overlay ---------------------------------------------------------------------------


def test_resize_nearest_keeps_pixels_crisp():
    mask = np.array([[1, 0], [0, 1]], dtype=bool)
    big = resize_mask(mask, (4, 4))  # (W, H)
    np.testing.assert_array_equal(big, np.kron(mask, np.ones((2, 2), dtype=bool)))
    wide = resize_mask(mask, (6, 2))
    assert wide.shape == (2, 6) and wide.dtype == bool
    np.testing.assert_array_equal(resize_mask(big, (2, 2)), mask)
    np.testing.assert_array_equal(resize_mask(np.array([[0.0, 0.3], [1.0, 0.0]]), (2, 2)), [[0, 1], [1, 0]])


@pytest.mark.parametrize("size", [(0, 4), (4,), "4x4", (4.0, 4), (True, 4)])
def test_resize_rejects_bad_sizes(size):
    with pytest.raises(InputError, match="width, height"):
        resize_mask(np.ones((2, 2), bool), size)


def test_clean_fills_holes_drops_specks_keeps_largest():
    mask = np.zeros((30, 30), dtype=bool)
    mask[2:12, 2:12] = True
    mask[5:7, 5:7] = False  # hole of 4 px
    mask[20:24, 20:26] = True  # second piece, 24 px
    mask[28, 0] = True  # speck
    filled = clean_mask(mask, fill_holes=True)
    assert filled[5:7, 5:7].all() and filled.sum() == mask.sum() + 4
    no_specks = clean_mask(mask, fill_holes=False, min_speck=2)
    assert not no_specks[28, 0] and no_specks.sum() == mask.sum() - 1
    largest = clean_mask(mask, fill_holes=True, min_speck=0, keep_largest=True)
    assert largest.sum() == 100 and not largest[20:24, 20:26].any()
    assert not clean_mask(mask, fill_holes=False, min_speck=1000).any()
    np.testing.assert_array_equal(clean_mask(mask, fill_holes=False), mask)
    assert not clean_mask(np.zeros((5, 5), bool), keep_largest=True, min_speck=3).any()


def test_diagonal_pixels_are_one_piece():
    mask = np.eye(5, dtype=bool)
    assert clean_mask(mask, fill_holes=False, min_speck=5).sum() == 5


def test_clean_rejects_negative_speck_size():
    with pytest.raises(InputError, match="min_speck"):
        clean_mask(np.ones((3, 3), bool), min_speck=-1)


def test_png_round_trip_is_deterministic_grey():
    mask = _square()
    data = mask_to_png(mask)
    assert data == mask_to_png(mask.copy())
    img = Image.open(io.BytesIO(data))
    assert img.mode == "L" and img.size == (30, 20) and set(np.unique(np.asarray(img))) == {0, 255}
    np.testing.assert_array_equal(mask_from_png(data), mask)
    assert mask_fraction(mask) == pytest.approx(120 / 600)


def test_masks_must_be_two_dimensional():
    with pytest.raises(InputError, match="2-D"):
        mask_to_png(np.zeros((2, 2, 3)))


def test_overlay_tints_mask_and_draws_outline():
    image = Image.new("RGB", (30, 20), (0, 0, 255))
    out = overlay_mask(image, _square(), opacity=0.5, color=(255, 0, 0), outline=1)
    assert out.size == (30, 20) and out.mode == "RGB"
    assert out.getpixel((0, 0)) == (0, 0, 255)  # outside: untouched
    assert out.getpixel((8, 5)) == (255, 0, 0)  # boundary: full colour
    assert out.getpixel((12, 10)) == (128, 0, 128)  # inside: 50% blend
    plain = overlay_mask(image, _square(), opacity=1.0, color="#00ff00", outline=0)
    assert plain.getpixel((12, 10)) == (0, 255, 0)
    small = overlay_mask(Image.new("RGB", (60, 40)), _square(), outline=0)  # mask resized to the image
    assert small.getpixel((20, 12)) != (0, 0, 0) and small.getpixel((2, 2)) == (0, 0, 0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(opacity=1.5), "opacity"),
        (dict(outline=-1), "outline"),
        (dict(color=(300, 0, 0)), "colour"),
        (dict(color="notacolour"), "colour"),
    ],
)
def test_overlay_bad_arguments(kwargs, message):
    with pytest.raises(InputError, match=message):
        overlay_mask(Image.new("RGB", (30, 20)), _square(), **kwargs)
