"""Bad input raises InputError naming the argument; unavailable weights raise ModelUnavailableError;
uncomputable scores are NaN with a reason."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.metrics import MaSC
from masc_ui.metrics.sample import Sample

PROMPT = "a photo of a kitten on a beach"


@pytest.fixture(scope="module")
def scorer(demo_weights: Path) -> MaSC:
    return MaSC(str(demo_weights / "siglip2-naflex"), device="cpu", naflex_max_patches=64)


@pytest.fixture()
def parts():
    rng = np.random.default_rng(0)
    img = Image.fromarray(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8))
    mask = np.zeros((48, 64), dtype=np.uint8)
    mask[10:40, 20:50] = 255
    return dict(
        ref_image=img, ref_mask=mask, out_image=img.copy(), out_mask=mask.copy(), prompt=PROMPT, object_name="kitten"
    )


@pytest.mark.parametrize(
    "arg, value, message",
    [
        ("ref_mask", np.zeros((4, 4, 3)), "ref_mask must be 2-D"),
        ("out_mask", np.zeros(10), "out_mask must be 2-D"),
        ("ref_mask", np.array([["a", "b"], ["c", "d"]]), "ref_mask must hold numbers"),
        ("out_mask", np.array([[None, 1], [0, 1]], dtype=object), "out_mask must hold numbers"),
        ("ref_mask", np.full((4, 4), np.nan), "ref_mask contains NaN"),
        ("out_mask", -np.ones((4, 4)), "out_mask has negative values"),
        ("ref_mask", None, "ref_mask is missing"),
        ("out_mask", None, "out_mask is missing"),
        ("ref_image", b"definitely not an image", "ref_image"),
        ("out_image", "/no/such/image.png", "out_image: file not found"),
        ("ref_image", 42, "ref_image"),
        ("out_image", np.zeros((5, 5, 7), dtype=np.uint8), "out_image"),
        ("prompt", "", "prompt is empty"),
        ("prompt", "   ", "prompt is empty"),
        ("prompt", None, "prompt must be a string"),
        ("prompt", ["a", "b"], "prompt must be a string"),
        ("object_name", 3, "object_name must be a string or None"),
    ],
)
def test_bad_input_names_the_argument(scorer: MaSC, parts: dict, arg: str, value, message: str) -> None:
    parts[arg] = value
    with pytest.raises(InputError, match=message):
        scorer.score(**parts)


def test_unreadable_image_file(scorer: MaSC, parts: dict, tmp_path: Path) -> None:
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    parts["ref_image"] = bad
    with pytest.raises(InputError, match="ref_image"):
        scorer.score(**parts)


def test_empty_reference_mask_gives_nan_cp_with_reason(scorer: MaSC, parts: dict) -> None:
    parts["ref_mask"] = np.zeros((48, 64), dtype=bool)
    r = scorer.score(**parts)
    assert math.isnan(r.cp) and "empty reference mask" in r.extras["cp_reason"]
    assert not math.isnan(r.pf) and "pf_reason" not in r.extras
    assert r.extras["cp_n_ref_fg"] == 0 and r.extras["cp_per_ref"] == [None]


def test_all_foreground_output_mask_gives_nan_pf_with_reason(scorer: MaSC, parts: dict) -> None:
    parts["out_mask"] = np.ones((48, 64), dtype=np.float32)
    r = scorer.score(**parts)
    assert math.isnan(r.pf) and "every output patch is foreground" in r.extras["pf_reason"]
    assert r.extras["pf_n_bg_pooled"] == 0 and r.extras["pf_n_fg"] == r.extras["pf_n_total"]
    assert r.maps.pf_attention is None and not math.isnan(r.cp)


def test_provenance_is_recorded(scorer: MaSC, parts: dict) -> None:
    prov = scorer.score(**parts).extras["provenance"]
    assert prov["model_id"].endswith("siglip2-naflex")
    assert prov["params"] == {"naflex": True, "naflex_max_patches": 64, "fg_threshold": 0.5, "stripper": "regex"}
    assert prov["device"] == "cpu" and prov["dtype"] == "float32" and prov["code_version"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(stripper="nltk"), "stripper must be one of"),
        (dict(fg_threshold=1.5), "fg_threshold"),
        (dict(fg_threshold="half"), "fg_threshold"),
        (dict(naflex_max_patches=0), "naflex_max_patches"),
        (dict(model_id=""), "model_id"),
        (dict(device="tpu:0"), "device"),
        (dict(dtype="float64"), "dtype"),
    ],
)
def test_bad_constructor_arguments(demo_weights: Path, kwargs: dict, message: str) -> None:
    kwargs.setdefault("model_id", str(demo_weights / "siglip2-naflex"))
    with pytest.raises(InputError, match=message):
        MaSC(**kwargs)


def test_missing_local_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        MaSC(str(tmp_path / "no-such-checkpoint"), device="cpu")


def test_incomplete_local_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelUnavailableError, match=str(tmp_path)):
        MaSC(str(tmp_path), device="cpu")


def test_offline_hub_id_names_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match="masc-ui-tests/siglip2-absent.*demo"):
        MaSC("masc-ui-tests/siglip2-absent", device="cpu")


@pytest.mark.parametrize(
    "samples, batch_size, message",
    [
        ("not a list", 2, "samples must be a list"),
        ([object()], 2, r"samples\[0\] must be a masc_ui.metrics.Sample"),
        ([], 0, "batch_size"),
    ],
)
def test_bad_batches(scorer: MaSC, samples, batch_size: int, message: str) -> None:
    with pytest.raises(InputError, match=message):
        scorer.score_many(samples, batch_size=batch_size)


def test_bad_sample_fields_name_the_sample(scorer: MaSC, parts: dict) -> None:
    img, mask = parts["ref_image"], parts["ref_mask"]
    with pytest.raises(InputError, match=r"samples\[1\].ref_masks\[0\] must be 2-D"):
        scorer.score_many([Sample(refs=(img,), out=img), Sample(refs=(img,), out=img, ref_masks=(mask[None],))])
    with pytest.raises(InputError, match=r"samples\[0\] has no reference image"):
        scorer.score_many([Sample(refs=(), out=img)])
    with pytest.raises(InputError, match=r"Sample.out"):
        scorer.score_many([Sample(refs=(img,), out=b"junk")])
    assert scorer.score_many([]) == []
