"""The LAION aesthetic predictor v2 head (christophschuhmann/improved-aesthetic-predictor,
`sac+logos+ava1-l14-linearMSE.pth`): an MLP on the L2-normalised CLIP ViT-L/14 image embedding.

Released layout: a plain state dict of the repository's `MLP` module, the one OpenS2V's `get_aesscore.py` loads
strictly: `layers.0` Linear(768, 1024), `layers.1` Dropout(0.2), `layers.2` Linear(1024, 128), `layers.3`
Dropout(0.2), `layers.4` Linear(128, 64), `layers.5` Dropout(0.1), `layers.6` Linear(64, 16), `layers.7` Linear(16,
1); no activations between them (the head is one affine map, kept as released). Every key is checked; the input
width is read from the file (768 for ViT-L/14; the tiny demo head's is its CLIP's).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from ...errors import ModelUnavailableError
from ..state_dicts import load_strict, read_state_dict

RELEASED_FILE = "sac+logos+ava1-l14-linearMSE.pth"
HIDDEN_WIDTHS = (1024, 128, 64, 16, 1)
DROPOUTS = (0.2, 0.2, 0.1)
"""After the first three Linear layers (inactive in eval mode; they keep the released indices 0, 2, 4, 6, 7)."""


class AestheticHead(nn.Module):
    """`forward(embeds (N, width) unit vectors) -> (N,)` predicted aesthetic rating (trained on 1-10 ratings)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        widths = (width,) + HIDDEN_WIDTHS
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(DROPOUTS):
                layers.append(nn.Dropout(DROPOUTS[i]))
        self.layers = nn.Sequential(*layers)
        self.width = width

    def forward(self, embeds: torch.Tensor) -> torch.Tensor:
        return self.layers(embeds).squeeze(-1)


def load_aesthetic_head(path: Path, *, what: str) -> AestheticHead:
    """The head of the released state dict `path`, every key checked (see the module docstring), float32, eval mode."""
    state = read_state_dict(path, what=what)
    first = state.get("layers.0.weight")
    if first is None or first.ndim != 2:
        raise ModelUnavailableError(
            f"{what}: the checkpoint lacks the key 'layers.0.weight'; it is not the aesthetic predictor's "
            f"{RELEASED_FILE}"
        )
    head = AestheticHead(int(first.shape[1]))
    load_strict(head, state, what=what)
    return head.float().eval()
