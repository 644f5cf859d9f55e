"""The packaged face detector, MTCNN with the real weights of the PyPI package `mtcnn` 1.0.0, detecting for real.

With the package's ONet threshold (0.8) our torch pipeline equals the package's own TensorFlow one: `RECORDED` holds
what `mtcnn.MTCNN().detect_faces(image, box_format="xyxy", output_type="numpy")` printed for these images
(tensorflow-cpu 2.21, in a separate environment: TensorFlow is not a dependency of ours). With our threshold (0.97)
no DreamBooth photo of `../shared/data` holds a face, and the astronaut's face keeps its five landmarks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from skimage import data

from masc_ui.errors import ModelUnavailableError
from masc_ui.imaging import open_image
from masc_ui.metrics.faces.mtcnn import PACKAGE_ONET_THRESHOLD, MtcnnFaceDetector, nms
from masc_ui.models.nets import mtcnn as mtcnn_net

RECORDED = {
    "astronaut": [
        [
            181.598,
            63.726,
            264.553,
            171.079,
            0.999,
            203.541,
            245.409,
            224.224,
            201.789,
            244.389,
            100.103,
            102.238,
            126.42,
            138.587,
            140.377,
        ]
    ],
    "edge_crop": [
        [0.0, 0.0, 68.203, 93.305, 0.998, 3.984, 45.596, 20.626, 2.543, 45.067, 19.807, 22.385, 47.213, 58.964, 60.771]
    ],
    "stretched": [
        [
            111.776,
            68.308,
            176.452,
            164.361,
            0.984,
            130.83,
            160.867,
            146.142,
            131.041,
            158.029,
            101.925,
            102.906,
            128.982,
            140.673,
            141.495,
        ]
    ],
    "rotated": [
        [
            130.014,
            80.135,
            222.578,
            192.202,
            0.997,
            153.495,
            194.723,
            181.071,
            164.401,
            206.006,
            127.348,
            115.645,
            146.203,
            163.71,
            151.729,
        ]
    ],
    "backpack/03.jpg": [
        [
            49.233,
            149.03,
            101.537,
            212.725,
            0.96,
            66.461,
            89.673,
            77.144,
            66.316,
            85.689,
            172.456,
            174.302,
            186.17,
            196.505,
            198.279,
        ],
        [
            120.262,
            940.541,
            155.799,
            980.926,
            0.949,
            137.793,
            149.526,
            145.157,
            133.818,
            144.156,
            955.386,
            958.255,
            966.418,
            969.879,
            972.486,
        ],
        [
            132.318,
            977.0,
            152.199,
            1001.001,
            0.915,
            138.504,
            146.996,
            142.345,
            137.684,
            144.495,
            984.334,
            985.401,
            989.656,
            993.944,
            994.8,
        ],
        [
            352.758,
            885.543,
            386.612,
            923.684,
            0.912,
            363.325,
            376.807,
            369.789,
            362.923,
            374.317,
            898.216,
            898.017,
            902.568,
            911.532,
            911.846,
        ],
        [
            335.23,
            833.798,
            353.972,
            857.183,
            0.887,
            341.123,
            350.052,
            345.963,
            341.451,
            348.12,
            840.636,
            840.227,
            845.179,
            851.143,
            851.046,
        ],
        [
            336.905,
            1010.862,
            365.01,
            1041.721,
            0.854,
            347.794,
            357.314,
            351.895,
            346.333,
            354.161,
            1020.204,
            1021.614,
            1027.285,
            1031.822,
            1033.416,
        ],
        [
            452.487,
            887.361,
            470.855,
            909.78,
            0.817,
            458.778,
            466.422,
            464.016,
            460.979,
            467.957,
            896.017,
            894.615,
            900.489,
            904.549,
            903.462,
        ],
        [
            221.003,
            850.639,
            242.511,
            874.912,
            0.801,
            228.637,
            238.269,
            233.345,
            228.932,
            236.23,
            858.444,
            858.839,
            864.477,
            869.239,
            869.816,
        ],
    ],
    "teapot/02.jpg": [
        [
            468.744,
            840.439,
            487.169,
            860.969,
            0.821,
            474.412,
            483.371,
            478.208,
            474.864,
            481.726,
            845.573,
            845.652,
            849.78,
            855.546,
            855.888,
        ]
    ],
}
"""Per image, the package's rows: x0, y0, x1, y1, P(face), 5 landmark x, 5 landmark y (rounded to 3 decimals)."""


def _astronaut_views() -> dict[str, np.ndarray]:
    photo = data.astronaut()
    return {
        "astronaut": photo,
        "edge_crop": photo[80:400, 200:480].copy(),
        "stretched": np.asarray(Image.fromarray(photo).resize((333, 517))),
        "rotated": np.asarray(Image.fromarray(photo).rotate(20)),
    }


def _dreambooth(shared_data: Path, name: str) -> np.ndarray:
    return np.asarray(open_image(shared_data / "dreambooth" / "dataset" / name).pixels.convert("RGB"))


@pytest.fixture(scope="module")
def package_pipeline() -> MtcnnFaceDetector:
    return MtcnnFaceDetector(onet_threshold=PACKAGE_ONET_THRESHOLD)


@pytest.fixture(scope="module")
def detector() -> MtcnnFaceDetector:
    return MtcnnFaceDetector()


def _rows(found) -> np.ndarray:
    rows = [[*f.box, f.score, *f.landmarks[:, 0], *f.landmarks[:, 1]] for f in found.faces]
    return np.asarray(rows, dtype=np.float64).reshape(-1, 15)


def _by_area(rows: np.ndarray) -> np.ndarray:
    return rows[np.argsort(-(rows[:, 2] - rows[:, 0]) * (rows[:, 3] - rows[:, 1]), kind="stable")]


def _assert_recorded(found, name: str) -> None:
    got, expected = _rows(found), _by_area(np.asarray(RECORDED[name]))
    assert got.shape == expected.shape, f"{name}: {len(got)} faces, the package found {len(expected)}"
    np.testing.assert_allclose(got[:, :4], expected[:, :4], atol=0.01)
    np.testing.assert_allclose(got[:, 4], expected[:, 4], atol=6e-4)
    np.testing.assert_allclose(got[:, 5:], expected[:, 5:], atol=0.01)


@pytest.mark.parametrize("name", ["astronaut", "edge_crop", "stretched", "rotated"])
def test_the_package_pipeline_is_reproduced_on_photos_of_a_person(package_pipeline, name):
    _assert_recorded(package_pipeline.detect(_astronaut_views()[name]), name)


@pytest.mark.parametrize("name", ["backpack/03.jpg", "teapot/02.jpg"])
def test_the_package_pipeline_is_reproduced_on_its_false_faces(package_pipeline, shared_data, name):
    _assert_recorded(package_pipeline.detect(_dreambooth(shared_data, name)), name)


def test_the_astronaut_has_one_face_with_the_five_arcface_landmarks(detector):
    found = detector.detect(data.astronaut())
    assert found.detector == "mtcnn" and len(found.faces) == 1 and not found.padded_retry
    face = found.faces[0]
    x0, y0, x1, y1 = face.box
    assert 160 < x0 < 200 and 50 < y0 < 90 and 250 < x1 < 290 and 150 < y1 < 190 and face.score > 0.99
    (lex, ley), (rex, rey), (nx, ny), (lmx, lmy), (rmx, rmy) = face.landmarks
    assert x0 < lex < nx < rex < x1 and x0 < lmx < nx < rmx < x1  # image-left eye and mouth corner first
    assert y0 < max(ley, rey) < ny < min(lmy, rmy) < y1  # eyes above the nose tip above the mouth


def test_no_dreambooth_photo_holds_a_face(detector, shared_data):
    photos = sorted((shared_data / "dreambooth" / "dataset").glob("*/*.jpg"))
    assert len(photos) >= 20
    found = {
        p.parent.name + "/" + p.name: detector.detect(_dreambooth(shared_data, f"{p.parent.name}/{p.name}"))
        for p in photos
    }
    assert {name: len(f.faces) for name, f in found.items() if f.faces} == {}


def test_tiny_flat_and_odd_images(detector):
    assert detector.detect(np.zeros((1, 1, 3), np.uint8)).faces == ()
    assert detector.detect(np.full((64, 48, 3), 128, np.uint8)).faces == ()
    assert detector.detect(np.zeros((11, 400, 3), np.uint8)).faces == ()  # shorter than a 12 px cell
    small = np.asarray(Image.fromarray(data.astronaut()).resize((96, 96)))
    assert len(detector.detect(small).faces) == 1


def test_nms_in_blocks_equals_nms_at_once():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 100, (300, 2))
    rows = np.c_[xy, xy + rng.uniform(5, 40, (300, 2)), rng.uniform(0, 1, 300)]
    rows = rows[np.argsort(-rows[:, 4])]
    for over in ("union", "min"):
        at_once = nms(rows, 0.5, over=over, block=10_000)
        assert 0 < len(at_once) < 300
        assert nms(rows, 0.5, over=over, block=7).tolist() == at_once.tolist()
    assert nms(rows[:0], 0.5).tolist() == []


def test_weight_files_must_fit_the_networks(tmp_path):
    net = mtcnn_net.PNet()
    arrays = [
        np.zeros(shape, np.float32)
        for shape in [
            (3, 3, 3, 10),
            (10,),
            (1, 1, 10),
            (3, 3, 10, 16),
            (16,),
            (1, 1, 16),
            (3, 3, 16, 32),
            (32,),
            (1, 1, 32),
            (1, 1, 32, 4),
            (4,),
            (1, 1, 32, 2),
            (2,),
        ]
    ]
    state = mtcnn_net.state_dict_from_keras(net, arrays, "pnet")
    assert state["body.0.weight"].shape == (10, 3, 3, 3) and state["cls.weight"].shape == (2, 32, 1, 1)
    with pytest.raises(ModelUnavailableError, match="12 weight arrays, the network needs 13"):
        mtcnn_net.state_dict_from_keras(net, arrays[:-1], "pnet")
    wrong = list(arrays)
    wrong[3] = np.zeros((3, 3, 10, 17), np.float32)
    with pytest.raises(ModelUnavailableError, match=r"weight body\.3\.weight has shape \(17, 10, 3, 3\)"):
        mtcnn_net.state_dict_from_keras(net, wrong, "pnet")
    with pytest.raises(ModelUnavailableError, match="pnet.lz4 is missing"):
        mtcnn_net.load_networks(tmp_path)
    (tmp_path / "pnet.lz4").write_bytes(b"not a joblib file")
    with pytest.raises(ModelUnavailableError, match="cannot be read"):
        mtcnn_net.load_networks(tmp_path)


def test_a_missing_package_is_a_clear_error(monkeypatch):
    def missing(name):
        raise mtcnn_net.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(mtcnn_net.metadata, "distribution", missing)
    with pytest.raises(ModelUnavailableError, match=r"pip install -r requirements.txt"):
        mtcnn_net.packaged_weights_dir()


def test_the_networks_load_the_packaged_weights_strictly():
    nets = mtcnn_net.load_networks()
    assert set(nets) == {"pnet", "rnet", "onet"}
    assert all(not net.training and next(net.parameters()).dtype == torch.float32 for net in nets.values())
    # the packaged weights are the trained ones: PReLU slopes differ per channel, not the 0.25 of a fresh layer
    assert float(nets["onet"].fc[1].weight.std()) > 0.01
