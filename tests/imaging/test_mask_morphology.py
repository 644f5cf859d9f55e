"""Eroding and dilating masks by whole pixels (the perturbations of the mask-sensitivity check)."""

from __future__ import annotations

import numpy as np
import pytest

from masc_ui.errors import InputError
from masc_ui.imaging.mask_morphology import MAX_SHIFT_PX, disk, shift_mask


def _square(size: int = 41, lo: int = 10, hi: int = 30) -> np.ndarray:
    m = np.zeros((size, size), np.float32)
    m[lo:hi, lo:hi] = 1.0
    return m


def test_zero_pixels_is_the_mask_itself():
    m = _square()
    out = shift_mask(m, 0)
    assert out.dtype == np.float32 and np.array_equal(out, m) and out is not m


def test_a_disk_holds_the_pixels_within_its_radius():
    d = disk(2)
    assert d.shape == (5, 5) and d.sum() == 13 and d[2, 0] and not d[0, 0]


@pytest.mark.parametrize("px", [1, 2, 3, 5])
def test_dilation_grows_a_square_by_exactly_px_along_its_sides(px):
    grown = shift_mask(_square(), px)
    row = grown[20]
    assert row[10 - px] == 1.0 and row[10 - px - 1] == 0.0 and row[29 + px] == 1.0 and row[29 + px + 1] == 0.0
    assert grown[10 - px - 1, 10 - px - 1] == 0.0  # corners are rounded: a disk, not a square


@pytest.mark.parametrize("px", [1, 2, 3, 5])
def test_erosion_shrinks_a_square_by_exactly_px_along_its_sides(px):
    shrunk = shift_mask(_square(), -px)
    row = shrunk[20]
    assert row[10 + px] == 1.0 and row[10 + px - 1] == 0.0 and row[29 - px] == 1.0 and row[29 - px + 1] == 0.0


def test_areas_are_nested_and_monotone_in_the_shift():
    m = _square()
    areas = [shift_mask(m, px).sum() for px in (-4, -2, 0, 2, 4)]
    assert areas == sorted(areas) and len(set(areas)) == 5
    assert np.all(shift_mask(m, -2) <= m) and np.all(shift_mask(m, 2) >= m)


def test_a_soft_edge_moves_as_a_whole_and_the_frame_adds_no_foreground():
    m = np.zeros((9, 9), np.float32)
    m[:, :3] = 1.0
    m[:, 3] = 0.5
    grown = shift_mask(m, 1)
    assert grown[4, 4] == 0.5 and grown[4, 3] == 1.0 and grown[4, 5] == 0.0
    shrunk = shift_mask(m, -1)
    assert shrunk[4, 0] == 0.0  # the border counts as background when eroding
    assert shrunk[4, 1] == 1.0 and shrunk[4, 2] == 0.5


@pytest.mark.parametrize("px", [MAX_SHIFT_PX + 1, -(MAX_SHIFT_PX + 1), 1.5, True, "3"])
def test_a_bad_shift_is_refused_with_the_rule(px):
    with pytest.raises(InputError, match="pixels|px"):
        shift_mask(_square(), px)
