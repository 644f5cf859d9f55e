"""DreamSim against the `dreamsim` package itself: `dreamsim.dreamsim(pretrained=True, cache_dir=<the demo release
folder>)` builds the package's ensemble (its ViT code, its CLIP/OpenCLIP-as-DINO loaders, peft loading the LoRA
adapter, its preprocessing, normalization and distance) on the tiny demo release, and our scorer must give the same
numbers. Only what the package cannot do offline or at tiny size is stood in for: `torch.hub.load` of the DINO
ViT-B/16 (our stand-in builds the package's own ViT class and loads the release folder's
`checkpoints/dino_vitbase16_pretrain.pth` strictly, as DINO's hubconf does) and the ViT-B width of `vit_base`.

Then: batched = one at a time, a shared reference encoded once, the release folder from a zip / URL, and every error
path of the weights."""

from __future__ import annotations

import json
import math
import os
import shutil
import warnings
import zipfile
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from torch import nn

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.metrics.registry import get_scorer, get_spec, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.demo.dreamsim import DEPTH, WIDTH
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.models.nets import dreamsim as nets

DISTANCE_TOLERANCE = 1e-5


def _image(seed: int, size=(120, 90)) -> Image.Image:
    coarse = np.random.default_rng(seed).integers(0, 256, (size[1] // 8, size[0] // 8, 3), dtype=np.uint8)
    return Image.fromarray(coarse).resize(size, Image.Resampling.BILINEAR)


@pytest.fixture(scope="module")
def package_model(demo_weights):
    """The package's `dreamsim()` ensemble and preprocess on the demo release folder."""
    import dreamsim
    from dreamsim.feature_extraction import load_clip_as_dino, load_open_clip_as_dino
    from dreamsim.feature_extraction.vision_transformer import VisionTransformer

    def tiny_vit_base(patch_size=16, **kwargs):
        return VisionTransformer(
            patch_size=patch_size,
            embed_dim=WIDTH,
            depth=DEPTH,
            num_heads=1,
            mlp_ratio=4,
            qkv_bias=True,
            norm_layer=partial(nn.LayerNorm, eps=1e-6),
            **kwargs,
        )

    hub_dir: dict[str, str] = {}

    def hub_load(repo: str, model: str, **kwargs):
        assert (repo, model) == ("facebookresearch/dino:main", "dino_vitb16")
        vit = tiny_vit_base(16, num_classes=0)
        path = os.path.join(hub_dir["dir"], "checkpoints", "dino_vitbase16_pretrain.pth")
        vit.load_state_dict(torch.load(path, weights_only=True), strict=True)
        return vit

    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the package's own: torch's deprecated weight_norm, peft's second adapter
        patch.setattr(load_clip_as_dino, "vit_base", tiny_vit_base)
        patch.setattr(load_open_clip_as_dino, "vit_base", tiny_vit_base)
        patch.setattr(torch.hub, "set_dir", lambda d: hub_dir.update(dir=d))
        patch.setattr(torch.hub, "load", hub_load)
        model, preprocess = dreamsim.dreamsim(pretrained=True, device="cpu", cache_dir=str(demo_weights / "dreamsim"))
    return model, preprocess


def test_dreamsim_equals_the_package(demo_settings, package_model):
    model, preprocess = package_model
    out = _image(0, (300, 200))
    refs = (_image(1, (120, 260)), _image(2, (256, 256)), _image(3, (500, 301)))
    scorer = get_scorer("dreamsim", demo_settings)
    [value] = scorer.score([Sample(refs=refs, out=out)])
    with torch.no_grad():
        expected = [float(model(preprocess(out), preprocess(r))) for r in refs]
        embedding = model.embed(preprocess(out)).numpy()
        with model.disable_adapter():
            without_lora = model.embed(preprocess(out)).numpy()
    assert value.extras["per_ref"] == pytest.approx(expected, abs=DISTANCE_TOLERANCE)
    assert value.value == pytest.approx(np.mean(expected), abs=DISTANCE_TOLERANCE)
    assert max(expected) - min(expected) > 1e-2  # the tiny release tells these images apart
    ours = scorer.backbone().image_embeddings([out])
    np.testing.assert_allclose(ours, embedding, atol=1e-5)
    assert np.abs(without_lora - embedding).max() > 1e-3  # the LoRA matters, and both sides applied it alike
    assert value.provenance["model_id"] == str(demo_settings.resolved_demo_weights_dir / "dreamsim")
    assert value.provenance["params"]["lora"]["layers"] == 3 * DEPTH


def test_dreamsim_seg_equals_the_package_on_the_segmented_output(demo_settings, package_model):
    model, preprocess = package_model
    pixels = np.asarray(_image(4, (100, 80))).copy()
    mask = np.zeros((80, 100), np.uint8)
    mask[10:30, 20:60] = 255  # box 40 x 20 -> margins 2 and 1
    ref = _image(5)
    [value] = get_scorer("dreamsim_seg", demo_settings).score(
        [Sample(refs=(ref,), out=Image.fromarray(pixels), out_mask=mask)]
    )
    pixels[mask == 0] = 255
    crop = Image.fromarray(pixels[9:31, 18:62])
    with torch.no_grad():
        expected = float(model(preprocess(crop), preprocess(ref)))
    assert value.extras["out_box"] == [18, 9, 62, 31]
    assert value.value == pytest.approx(expected, abs=DISTANCE_TOLERANCE)


def test_the_spec_declares_a_distance():
    for name in ("dreamsim", "dreamsim_seg"):
        spec = get_spec(name)
        assert spec.range == (0.0, 2.0) and not spec.higher_is_better and spec.family == "dino"
        assert spec.backbone_settings == ("dreamsim_weights",)
    assert get_spec("dreamsim_seg").needs_masks == "out"


def test_identical_images_are_at_distance_zero_within_the_range(demo_settings):
    img = _image(6)
    [value] = get_scorer("dreamsim", demo_settings).score([Sample(refs=(img,), out=img)])
    assert 0.0 <= value.value < 1e-6 and get_spec("dreamsim").in_range(value.value)


def test_batched_equals_one_at_a_time_and_a_shared_reference_is_encoded_once(demo_settings):
    shared = _image(10)
    samples = [Sample(refs=(shared,), out=_image(k)) for k in range(11, 15)] + [
        Sample(refs=(shared, _image(16)), out=_image(17))
    ]
    models = ModelRegistry()
    scorer = get_scorer("dreamsim", demo_settings, models)
    batched = scorer.score(samples)
    backbone = scorer.backbone()
    assert backbone.image_forwards == 5 + 2  # five outputs, the shared reference once, the second reference
    for sample, value in zip(samples, batched):
        backbone.clear_caches()
        [alone] = get_scorer("dreamsim", demo_settings, ModelRegistry()).score([sample])
        assert value.value == pytest.approx(alone.value, abs=1e-6)
    seg = score_metrics(samples, "dreamsim,dreamsim_seg", demo_settings, models, missing="nan")
    assert seg["dreamsim"][0].value == batched[0].value
    assert all(v.is_nan and "dreamsim_seg needs out_mask" in v.reason for v in seg["dreamsim_seg"])


def test_bad_inputs_are_named(demo_settings):
    with pytest.raises(InputError, match="dreamsim needs reference"):
        get_scorer("dreamsim", demo_settings).score([Sample(refs=(), out=_image(20))])
    with pytest.raises(InputError, match="dreamsim_seg needs out_mask"):
        get_scorer("dreamsim_seg", demo_settings).score([Sample(refs=(_image(21),), out=_image(22))])
    with pytest.raises(InputError, match="dreamsim_seg margin must be a number"):
        get_scorer("dreamsim_seg", demo_settings, margin=2)
    with pytest.raises(InputError, match="metric dreamsim has no parameter"):
        get_scorer("dreamsim", demo_settings, margin=0.1)
    [empty] = get_scorer("dreamsim_seg", demo_settings).score(
        [Sample(refs=(_image(23),), out=_image(24), out_mask=np.zeros((90, 120), bool))]
    )
    assert math.isnan(empty.value) and "output mask is empty" in empty.reason


def _score_with(settings, weights) -> float:
    scorer = get_scorer("dreamsim", settings.replace(dreamsim_weights=str(weights)), ModelRegistry())
    return scorer.score([Sample(refs=(_image(30),), out=_image(31))])[0].value


def test_the_weights_from_a_zip_url_and_the_dino_backbone_downloaded_beside(demo_settings, demo_weights, tmp_path):
    release = demo_weights / "dreamsim"
    expected = _score_with(demo_settings, release)
    archive = tmp_path / "dreamsim_ensemble_checkpoint.zip"
    with zipfile.ZipFile(archive, "w") as zipped:  # the release zip: no DINO backbone inside
        for path in release.rglob("*"):
            if path.is_file() and "checkpoints" not in path.parts:
                zipped.write(path, path.relative_to(release))
    backbone_url = (release / nets.DINO_BACKBONE_FILE).as_uri()
    settings = demo_settings.replace(cache_dir=tmp_path / "cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nets, "DINO_BACKBONE_URL", backbone_url)
        patch.setattr("masc_ui.metrics.dino.dreamsim.DINO_BACKBONE_URL", backbone_url)
        assert _score_with(settings, archive.as_uri()) == pytest.approx(expected, abs=1e-7)
    extracted = tmp_path / "cache" / "dreamsim" / "dreamsim_ensemble_checkpoint"
    assert (extracted / nets.LORA_DIR / "adapter_config.json").is_file()
    assert (extracted / nets.DINO_BACKBONE_FILE).is_file()
    assert _score_with(settings, archive.as_uri()) == pytest.approx(expected, abs=1e-7)  # cached: no download


def test_a_release_folder_extracted_with_its_top_folder(demo_settings, demo_weights, tmp_path):
    shutil.copytree(demo_weights / "dreamsim", tmp_path / "models" / "inner")
    expected = _score_with(demo_settings, demo_weights / "dreamsim")
    assert _score_with(demo_settings, tmp_path / "models") == pytest.approx(expected, abs=1e-7)


def _release_copy(demo_weights: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "release"
    shutil.copytree(demo_weights / "dreamsim", copy)
    return copy


def test_missing_weights_are_named(demo_settings, demo_weights, tmp_path):
    with pytest.raises(ModelUnavailableError, match="MASC_DREAMSIM_WEIGHTS"):
        _score_with(demo_settings, tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelUnavailableError, match="holds no ensemble_lora"):
        _score_with(demo_settings, empty)
    release = _release_copy(demo_weights, tmp_path)
    (release / nets.DINO_BACKBONE_FILE).unlink()
    with pytest.raises(ModelUnavailableError, match="dino_vitb16 weights .* do not exist.*dino_vitbase16_pretrain"):
        _score_with(demo_settings, release)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"not a zip")
    with pytest.raises(ModelUnavailableError, match="not a readable zip archive"):
        _score_with(demo_settings.replace(cache_dir=tmp_path / "cache"), broken)


def test_weights_that_do_not_fit_are_refused(demo_settings, demo_weights, tmp_path):
    release = _release_copy(demo_weights, tmp_path)
    clip = release / "clip_vitb16_pretrain.pth.tar"
    state = torch.load(clip, weights_only=True)
    del state["state_dict"]["proj"]
    torch.save(state, clip)
    with pytest.raises(ModelUnavailableError, match="clip_vitb16 weights .* lacks the CLIP projection 'proj'"):
        _score_with(demo_settings, release)
    shutil.rmtree(release)
    release = _release_copy(demo_weights, tmp_path)
    dino = release / nets.DINO_BACKBONE_FILE
    state = torch.load(dino, weights_only=True)
    state["head.weight"] = torch.zeros(3, WIDTH)
    torch.save(state, dino)
    with pytest.raises(ModelUnavailableError, match="unexpected key 'head.weight'"):
        _score_with(demo_settings, release)


def _edit_adapter(release: Path, **changes) -> None:
    path = release / nets.LORA_DIR / "adapter_config.json"
    config = json.loads(path.read_text())
    config.update(changes)
    path.write_text(json.dumps(config))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"use_dora": True}, "use_dora=True, not supported"),
        ({"bias": "all"}, "trains biases"),
        ({"peft_type": "IA3"}, "IA3 adapter, not LoRA"),
        (
            {"target_modules": ["qkv", "fc1"]},
            "lacks lora_A/lora_B weights for 'extractor_list.0.model.blocks.0.mlp.fc1'",
        ),
        ({"target_modules": ["fc1"]}, "holds weights for 'extractor_list.0.model.blocks.0.attn.qkv'"),
        ({"r": 8}, "have shapes"),
    ],
)
def test_adapters_that_do_not_fit_are_refused(demo_settings, demo_weights, tmp_path, changes, message):
    release = _release_copy(demo_weights, tmp_path)
    _edit_adapter(release, **changes)
    with pytest.raises(ModelUnavailableError, match=message):
        _score_with(demo_settings, release)
