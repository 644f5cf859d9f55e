"""Overlays: colour scale, grid upsampling, heat maps with legends, correspondence lines, mask overlays."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from masc_ui import overlays


def test_colormap_ends_nan_and_clamping():
    rgba = overlays.colormap(np.array([0.0, 1.0, np.nan, 5.0, -3.0]), 0.0, 1.0)
    assert rgba.dtype == np.uint8 and rgba.shape == (5, 4)
    assert tuple(rgba[0, :3]) == (68, 1, 84) and tuple(rgba[1, :3]) == (253, 231, 37)  # viridis ends
    assert rgba[2, 3] == 0 and rgba[0, 3] == 255  # NaN transparent
    assert tuple(rgba[3]) == tuple(rgba[1]) and tuple(rgba[4]) == tuple(rgba[0])  # clamped


def test_grid_to_image_maps_patches_to_pixel_blocks():
    grid = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    up = overlays.grid_to_image(grid, (6, 4))  # (W, H)
    assert up.shape == (4, 6)
    assert (up[:2, :2] == 1).all() and (up[2:, 4:] == 6).all() and (up[:2, 2:4] == 2).all()
    with pytest.raises(ValueError, match="2-D"):
        overlays.grid_to_image(np.zeros(3), (4, 4))


def test_heatmap_keeps_image_size_and_adds_legend_and_leaves_nan_cells_untouched():
    img = Image.new("RGB", (64, 32), (200, 10, 10))
    grid = np.array([[np.nan, 0.5], [0.2, 0.9]], dtype=np.float32)
    out = overlays.heatmap(img, grid, lo=0.0, hi=1.0, title="t", opacity=0.6)
    assert out.size == (64, 32 + overlays.legend_height(64, "t")) and out.mode == "RGB"
    arr = np.asarray(out)
    assert tuple(arr[2, 2]) == (200, 10, 10)  # NaN patch (top-left) shows the photo
    assert tuple(arr[2, 40]) != (200, 10, 10)  # coloured patch
    legend = arr[32:]
    assert legend.std() > 0  # colour bar and text drawn


@pytest.mark.parametrize("width", [120, 300, 1000])
def test_a_long_title_on_a_square_image_wraps_whole_and_the_colour_bar_fits(width):
    from PIL import ImageDraw

    title = "CP over reference 1: best cosine of each subject patch"
    out = overlays.heatmap(
        Image.new("RGB", (width, width), (90, 90, 90)), np.array([[0.2, 0.8]]), lo=0.2, hi=0.8, title=title
    )
    size = overlays.legend_font_size(width)
    lines = overlays._wrap(title, overlays._font(size), width - 12)
    assert " ".join(lines) == title  # nothing dropped
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength
    assert all(measure(line, font=overlays._font(size)) <= width - 12 for line in lines)
    legend = np.asarray(out)[width:]
    assert out.size == (width, width + overlays.legend_height(width, title))
    bar_rows = np.where((np.abs(legend.astype(int) - legend.mean(axis=1, keepdims=True)).sum(axis=-1) > 0).any(axis=1))[
        0
    ]
    assert bar_rows.max() < legend.shape[0] - 2  # the colour bar ends inside the strip, with a margin
    viridis_top = np.array([253, 231, 37])
    assert (np.abs(legend.astype(int) - viridis_top).sum(axis=-1) < 30).any()  # the bar's bright end is drawn
    assert size >= overlays.LEGEND_FONT_MIN and overlays.legend_font_size(1000) > overlays.legend_font_size(300)


def test_patch_center_is_row_major():
    assert overlays.patch_center(0, (2, 4), (40, 20)) == (5.0, 5.0)
    assert overlays.patch_center(5, (2, 4), (40, 20)) == (15.0, 15.0)


def test_correspondences_draw_only_the_chosen_reference_and_top_k():
    ref = Image.new("RGB", (40, 40), "black")
    out = Image.new("RGB", (80, 40), "black")
    matches = [(0, 0, 7, 0.9), (0, 3, 0, 0.2), (1, 0, 0, 0.99)]
    pic = overlays.correspondences(ref, out, matches, ref_grid=(2, 2), out_grid=(2, 4), top_k=1, height=40)
    title = "top 1 correspondences (reference 1 -> output), colour = cosine"
    assert pic.size == (40 + 16 + 80, 40 + overlays.legend_height(40 + 16 + 80, title))
    arr = np.asarray(pic)[:40]
    assert (arr.sum(axis=-1) > 0).any()
    # The one drawn line starts at ref patch 0 (10, 10): its end point sits on output patch 7 (70, 30) + offset.
    assert arr[30, 40 + 16 + 70].sum() > 0 and arr[30, 40 + 16 + 10].sum() == 0


def test_mask_overlay_tints_inside_and_resizes_a_mask_of_another_size():
    img = Image.new("RGB", (20, 10), (0, 0, 0))
    mask = np.zeros((5, 10), dtype=bool)
    mask[:, 5:] = True
    out = np.asarray(overlays.mask_overlay(img, mask, opacity=1.0, color=(0, 255, 0)))
    assert out.shape == (10, 20, 3)
    assert tuple(out[5, 15]) == (0, 255, 0) and tuple(out[5, 3]) == (0, 0, 0)
    assert overlays.mask_overlay(img, None).size == (20, 10)


def test_draw_prompts_marks_points_and_box():
    img = Image.new("RGB", (100, 100), "black")
    out = np.asarray(overlays.draw_prompts(img, [(20, 20, 1), (80, 80, 0)], box=(10, 50, 40, 90)))
    assert out[20, 20, 1] > 150 and out[80, 80, 0] > 150
    assert out[50, 25, 2] > 200  # box edge


def test_side_by_side_scales_to_the_tallest_and_keeps_each_whole():
    a, b = Image.new("RGB", (30, 60), "red"), Image.new("RGB", (40, 20), "blue")
    pic = overlays.side_by_side([a, b], gap=10)
    assert pic.size == (30 + 10 + 120, 60)
    arr = np.asarray(pic)
    assert (
        tuple(arr[30, 5]) == (255, 0, 0)
        and tuple(arr[30, 35]) == (255, 255, 255)
        and tuple(arr[59, 159]) == (0, 0, 255)
    )
    with pytest.raises(ValueError, match="at least one"):
        overlays.side_by_side([])
