"""ArtScore: equal to an independent computation (PIL squash-resize, a functional Bottleneck-ResNet forward
written here from the state dict), batched == one at a time, cached reruns, bad inputs, the released ResNet-50
key layout, strict loading."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from skimage import data
from torch.nn import functional as F

from masc_ui.errors import ModelUnavailableError
from masc_ui.metrics.registry import get_scorer, get_spec
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.models.nets.artscore import RELEASED_FILE, build_artscore_network

MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])


def _images() -> list[Image.Image]:
    rng = np.random.default_rng(0)
    return [
        Image.fromarray(data.astronaut()),
        Image.fromarray(data.coffee()),
        Image.fromarray(rng.integers(0, 256, (50, 90, 3), dtype=np.uint8)),
        Image.fromarray(data.chelsea()),
    ]


def _resnet_forward(sd, x):
    def bn(t, p):
        return F.batch_norm(
            t, sd[p + ".running_mean"], sd[p + ".running_var"], sd[p + ".weight"], sd[p + ".bias"], False, 0.0, 1e-5
        )

    x = F.max_pool2d(F.relu(bn(F.conv2d(x, sd["conv1.weight"], stride=2, padding=3), "bn1")), 3, 2, 1)
    for stage in range(1, 5):
        block = 0
        while f"layer{stage}.{block}.conv1.weight" in sd:
            p = f"layer{stage}.{block}"
            stride = 2 if stage > 1 and block == 0 else 1
            out = F.relu(bn(F.conv2d(x, sd[p + ".conv1.weight"]), p + ".bn1"))
            out = F.relu(bn(F.conv2d(out, sd[p + ".conv2.weight"], stride=stride, padding=1), p + ".bn2"))
            out = bn(F.conv2d(out, sd[p + ".conv3.weight"]), p + ".bn3")
            short = (
                bn(F.conv2d(x, sd[p + ".downsample.0.weight"], stride=stride), p + ".downsample.1")
                if p + ".downsample.0.weight" in sd
                else x
            )
            x = F.relu(out + short)
            block += 1
    x = x.mean((2, 3))
    x = F.relu(F.linear(x, sd["fc.0.weight"], sd["fc.0.bias"]))
    return F.linear(x, sd["fc.3.weight"], sd["fc.3.bias"])[:, 0]


def _independent(sd, img: Image.Image) -> float:
    arr = (np.asarray(img.convert("RGB").resize((224, 224), Image.BILINEAR), np.float64) / 255 - MEAN) / STD
    with torch.no_grad():
        return float(_resnet_forward(sd, torch.from_numpy(arr).permute(2, 0, 1)[None].float())[0])


def test_artscore_equals_an_independent_computation(demo_settings, demo_weights):
    sd = torch.load(demo_weights / "artscore" / RELEASED_FILE)
    values = get_scorer("artscore", demo_settings).score([Sample(refs=(), out=img) for img in _images()])
    for img, value in zip(_images(), values):
        assert value.reason is None and value.value == pytest.approx(_independent(sd, img), abs=1e-5)
    assert "only relative values" in values[0].provenance["params"]["convention"]
    assert "relative" in get_spec("artscore").convention and get_spec("artscore").range == (-math.inf, math.inf)


def test_batched_equals_one_at_a_time_and_reruns_are_cached(demo_settings):
    images = _images() + [_images()[0]]
    scorer = get_scorer("artscore", demo_settings, ModelRegistry())
    batched = scorer.score([Sample(refs=(), out=img) for img in images])
    backbone = scorer.backbone()
    assert backbone.forwards == 4
    scorer.score([Sample(refs=(), out=img) for img in images])
    assert backbone.forwards == 4
    for img, value in zip(images, batched):
        single = get_scorer("artscore", demo_settings, ModelRegistry()).score([Sample(refs=(), out=img)])[0]
        assert single.value == pytest.approx(value.value, abs=1e-5)


def test_bad_inputs(demo_settings):
    scorer = get_scorer("artscore", demo_settings)
    tiny, grey = Image.new("RGB", (1, 1), (200, 10, 10)), Image.fromarray(data.camera())
    rgba = Image.fromarray(data.astronaut()).convert("RGBA")
    values = scorer.score([Sample(refs=(), out=img) for img in (tiny, grey, rgba)])
    assert all(math.isfinite(v.value) for v in values)
    assert values[1].value == pytest.approx(scorer.score([Sample(refs=(), out=grey.convert("RGB"))])[0].value)


def test_released_resnet50_key_layout():
    """Written from jchen175/ArtScore `models.get_resnet` (torchvision resnet50, fc = Sequential head)."""
    with torch.device("meta"):
        layout = {k: tuple(v.shape) for k, v in build_artscore_network().state_dict().items()}
    expected = {
        "conv1.weight": (64, 3, 7, 7),
        "bn1.running_mean": (64,),
        "layer1.0.downsample.0.weight": (256, 64, 1, 1),
        "layer2.3.conv3.weight": (512, 128, 1, 1),
        "layer3.5.bn2.weight": (256,),
        "layer4.2.bn3.running_var": (2048,),
        "fc.0.weight": (1000, 2048),
        "fc.0.bias": (1000,),
        "fc.3.weight": (1, 1000),
        "fc.3.bias": (1,),
    }
    for key, shape in expected.items():
        assert layout[key] == shape, key
    assert "fc.weight" not in layout and "layer3.6.conv1.weight" not in layout and len(layout) == 322


def test_strict_loading_names_the_key(demo_settings, demo_weights, tmp_path: Path):
    sd = torch.load(demo_weights / "artscore" / RELEASED_FILE)
    for key, broken in {
        "fc.weight": {**sd, "fc.weight": torch.zeros(1, 256)},
        "fc.3.bias": {k: v for k, v in sd.items() if k != "fc.3.bias"},
    }.items():
        path = tmp_path / f"{len(broken)}.pth"
        torch.save(broken, path)
        with pytest.raises(ModelUnavailableError, match=key.replace(".", r"\.")):
            get_scorer("artscore", demo_settings.replace(artscore_checkpoint=str(path))).score(
                [Sample(refs=(), out=_images()[0])]
            )
    with pytest.raises(ModelUnavailableError, match="MASC_ARTSCORE_CHECKPOINT"):
        get_scorer("artscore", demo_settings.replace(artscore_checkpoint=str(tmp_path / "no.pth"))).score(
            [Sample(refs=(), out=_images()[0])]
        )
