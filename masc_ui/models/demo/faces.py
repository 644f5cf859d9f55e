"""Tiny random face models in their released file layouts, loaded back through the real loaders. Their
numbers mean nothing.

- `build_recognizer`: an IR backbone (units 1, 1, 1, 1; widths 8, 16, 32, 64; embedding 64) saved as a plain
  state dict named like the released `glint360k_curricular_face_r101_backbone.bin`.
- `build_retinaface`: the real RetinaFace-MobileNet0.25 network (it is small: 0.4 M parameters) with random
  weights, saved as `mobilenet0.25_Final.pth` with the `module.` prefixes of the released file.
- `build_arcface`: an ONNX graph with the interface of insightface's `w600k_r50.onnx` (input `input.1`, (N, 3, 112,
  112) float32, batch dimension free; one (N, 64) embedding output): an 8x8 stride-8 convolution, ReLU, flatten and
  a linear layer with random weights, written with `onnx.helper`, saved as `w600k_r50.onnx` (the folder stands in
  for a `buffalo_l` pack without its detector).
"""

from __future__ import annotations

from pathlib import Path

import torch

TINY_IR = dict(stem=8, units=(1, 1, 1, 1), widths=(8, 16, 32, 64), embedding=64)
ARCFACE_CHANNELS, ARCFACE_PATCH, ARCFACE_EMBEDDING = 8, 8, 64
ARCFACE_OPSET, ARCFACE_IR_VERSION = 13, 8
ARCFACE_FILE = "w600k_r50.onnx"
"""The file name of insightface's `buffalo_l` recognizer (`masc_ui.metrics.faces.arcface.PACK_RECOGNIZER`)."""


def build_recognizer(out_dir: Path, seed: int) -> None:
    from ..nets.ir import RELEASED_FILE, IRArchitecture, IRBackbone

    torch.manual_seed(seed)
    model = IRBackbone(IRArchitecture(**TINY_IR))
    _randomize_batchnorm(model)
    torch.save(model.state_dict(), out_dir / RELEASED_FILE)


def build_retinaface(out_dir: Path, seed: int) -> None:
    from ..nets.retinaface import RELEASED_FILE, RetinaFaceMobileNet

    torch.manual_seed(seed)
    model = RetinaFaceMobileNet()
    _randomize_batchnorm(model)
    torch.save({f"module.{k}": v for k, v in model.state_dict().items()}, out_dir / RELEASED_FILE)


def build_arcface(out_dir: Path, seed: int) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    cells = (112 // ARCFACE_PATCH) ** 2 * ARCFACE_CHANNELS
    weights = {
        "conv.weight": rng.normal(0, 0.05, (ARCFACE_CHANNELS, 3, ARCFACE_PATCH, ARCFACE_PATCH)),
        "conv.bias": rng.normal(0, 0.05, ARCFACE_CHANNELS),
        "fc.weight": rng.normal(0, 0.05, (ARCFACE_EMBEDDING, cells)),
        "fc.bias": rng.normal(0, 0.05, ARCFACE_EMBEDDING),
    }
    nodes = [
        helper.make_node(
            "Conv",
            ["input.1", "conv.weight", "conv.bias"],
            ["conv"],
            name="conv_0",
            kernel_shape=[ARCFACE_PATCH] * 2,
            strides=[ARCFACE_PATCH] * 2,
        ),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu_0"),
        helper.make_node("Flatten", ["relu"], ["flat"], name="flatten_0", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["embedding"], name="fc_0", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_arcface",
        [helper.make_tensor_value_info("input.1", TensorProto.FLOAT, ["None", 3, 112, 112])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["None", ARCFACE_EMBEDDING])],
        initializer=[numpy_helper.from_array(v.astype(np.float32), name=k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ARCFACE_OPSET)])
    model.ir_version = ARCFACE_IR_VERSION
    onnx.checker.check_model(model)
    onnx.save(model, str(out_dir / ARCFACE_FILE))


def _randomize_batchnorm(model: torch.nn.Module) -> None:
    """Non-trivial running statistics, so that a loader that skipped them would change the outputs."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.running_mean is not None:
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
