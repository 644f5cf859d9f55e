"""The convolutional networks' memory layout: channels-last on the CPU (ArtScore's ResNet, FaceSim's IR), the default
layout elsewhere, with the same values as the default layout."""

from __future__ import annotations

import torch
import torchvision

from masc_ui.metrics.registry import get_scorer
from masc_ui.models.conv_layout import conv_input, conv_layout, in_conv_layout


def _is_channels_last(model: torch.nn.Module) -> bool:
    weights = [p for p in model.parameters() if p.dim() == 4]
    return bool(weights) and all(p.is_contiguous(memory_format=torch.channels_last) for p in weights)


def test_channels_last_on_the_cpu_only():
    assert conv_layout("cpu") == torch.channels_last
    assert conv_layout("cuda") == conv_layout(torch.device("cuda", 1)) == torch.contiguous_format
    net = torchvision.models.resnet18()
    assert _is_channels_last(in_conv_layout(net, "cpu"))
    assert not _is_channels_last(in_conv_layout(net, "cuda:0"))  # back to the default layout (device untouched)
    x = conv_input(torch.rand(2, 3, 8, 8, dtype=torch.float64), "cpu", torch.float32)
    assert x.dtype == torch.float32 and x.is_contiguous(memory_format=torch.channels_last)


def test_same_values_in_both_layouts():
    torch.manual_seed(0)
    net = torchvision.models.resnet18().eval()
    x = torch.rand(3, 3, 64, 64)
    with torch.inference_mode():
        plain = net(x)
        last = in_conv_layout(net, "cpu")(conv_input(x, "cpu", torch.float32))
    torch.testing.assert_close(last, plain, atol=1e-5, rtol=1e-5)


def test_the_catalogue_convnets_run_channels_last_on_the_cpu(demo_settings):
    for metric in ("artscore", "facesim"):
        backbone = get_scorer(metric, demo_settings).backbone()
        network = backbone.recognizer.model if metric == "facesim" else backbone.model
        assert _is_channels_last(network), metric
