"""Tiny random face models in their released file layouts, loaded back through the real loaders. Their
numbers mean nothing.

- `build_recognizer`: an IR backbone (units 1, 1, 1, 1; widths 8, 16, 32, 64; embedding 64) saved as a plain
  state dict named like the released `glint360k_curricular_face_r101_backbone.bin`.
- `build_retinaface`: the real RetinaFace-MobileNet0.25 network (it is small: 0.4 M parameters) with random
  weights, saved as `mobilenet0.25_Final.pth` with the `module.` prefixes of the released file.
"""

from __future__ import annotations

from pathlib import Path

import torch

TINY_IR = dict(stem=8, units=(1, 1, 1, 1), widths=(8, 16, 32, 64), embedding=64)


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


def _randomize_batchnorm(model: torch.nn.Module) -> None:
    """Non-trivial running statistics, so that a loader that skipped them would change the outputs."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.running_mean is not None:
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
