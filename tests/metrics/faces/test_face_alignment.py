"""ArcFace-template alignment: our closed-form least-squares similarity against scikit-image's Umeyama estimate
(what insightface's `norm_crop` uses), and the warp/resize recipe of FaceSim."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import data
from skimage.transform import SimilarityTransform

from masc_ui.errors import InputError
from masc_ui.metrics.faces.alignment import ARCFACE_TEMPLATE, aligned_face, norm_crop, similarity_transform


def _skimage_matrix(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    tform = SimilarityTransform.from_estimate(src, dst)
    assert tform
    return tform.params[:2]


@pytest.mark.parametrize("seed", range(5))
def test_least_squares_similarity_equals_umeyama(seed):
    rng = np.random.default_rng(seed)
    src = rng.uniform(50, 400, (5, 2))
    dst = ARCFACE_TEMPLATE.astype(np.float64) * 2
    np.testing.assert_allclose(similarity_transform(src, dst), _skimage_matrix(src, dst), atol=1e-9)


def test_two_points_land_exactly_on_the_template_eyes():
    eyes = np.array([[120.0, 90.0], [170.0, 110.0]])
    matrix = similarity_transform(eyes, ARCFACE_TEMPLATE[:2] * 2)
    mapped = (matrix @ np.c_[eyes, np.ones(2)].T).T
    np.testing.assert_allclose(mapped, ARCFACE_TEMPLATE[:2] * 2, atol=1e-9)
    np.testing.assert_allclose(matrix, _skimage_matrix(eyes, ARCFACE_TEMPLATE[:2] * 2), atol=1e-9)


def test_norm_crop_and_resize_follow_facesim_cur():
    rgb = data.astronaut()
    landmarks = np.array([[200, 100], [246, 102], [224, 128], [205, 146], [240, 147]], dtype=np.float32)
    expected_224 = cv2.warpAffine(rgb, _skimage_matrix(landmarks, ARCFACE_TEMPLATE * 2.0), (224, 224), borderValue=0.0)
    got_224 = norm_crop(rgb, landmarks, 224)
    assert got_224.shape == (224, 224, 3) and got_224.dtype == np.uint8
    # OpenCV interpolates at 1/32 px: matrices equal to 1e-9 can still round a few edge pixels differently
    diff = np.abs(got_224.astype(int) - expected_224.astype(int))
    assert diff.mean() < 0.02 and diff.max() <= 4
    crop = aligned_face(rgb, landmarks)
    assert crop.shape == (112, 112, 3)
    np.testing.assert_array_equal(crop, cv2.resize(got_224, (112, 112), interpolation=cv2.INTER_LINEAR))


def test_bad_landmarks_are_refused():
    with pytest.raises(InputError, match="coincide"):
        similarity_transform(np.ones((5, 2)), ARCFACE_TEMPLATE)
    with pytest.raises(InputError, match="5 landmarks"):
        norm_crop(data.astronaut(), np.ones((3, 2)))
