"""Channels-last vs the default layout for the convolutional networks of the catalogue, side by side in one run.

ArtScore's ResNet-50 (224 px) and FaceSim's IR-101 (112 px), seeded random weights, float32 on the CPU; ms per image
at batch 1 and at --batch-size, each layout's best of --repeats alternating runs, and the largest |difference|
between the two layouts' outputs. `masc_ui/models/conv_layout.py` picks channels-last on the CPU from these
figures.

    python bench/conv_layout.py
    python bench/conv_layout.py --batch-size 16 --repeats 5

Not a test: numbers depend on the machine and its load; read the ratio measured side by side.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch
import torchvision

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from masc_ui.models.nets.ir import IR101_UNITS, IR101_WIDTHS, IRArchitecture, IRBackbone  # noqa: E402


def networks() -> dict[str, tuple[torch.nn.Module, int]]:
    """name -> (network in eval mode, input side in pixels)."""
    torch.manual_seed(0)
    return {
        "ResNet-50 (ArtScore)": (torchvision.models.resnet50().eval(), 224),
        "IR-101 (FaceSim)": (IRBackbone(IRArchitecture(64, IR101_UNITS, IR101_WIDTHS, 512)).eval(), 112),
    }


def seconds(net: torch.nn.Module, x: torch.Tensor) -> float:
    with torch.inference_mode():
        start = time.perf_counter()
        net(x)
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, float32, CPU, best of {args.repeats}\n")
    header = f"{'network':<22}{'batch':>6}{'NCHW ms/img':>13}{'channels-last ms/img':>22}{'ratio':>8}{'max |d|':>10}"
    print(header)
    print("-" * len(header))
    for name, (net, side) in networks().items():
        for batch in sorted({1, args.batch_size}):
            x = torch.randn(batch, 3, side, side, generator=torch.Generator().manual_seed(1))
            last = x.contiguous(memory_format=torch.channels_last)
            with torch.inference_mode():
                plain_out = net(x)  # warm-up, and the reference output
                net.to(memory_format=torch.channels_last)
                last_out = net(last)
                net.to(memory_format=torch.contiguous_format)
            plain = channels_last = math.inf
            for _ in range(args.repeats):
                plain = min(plain, seconds(net, x))
                net.to(memory_format=torch.channels_last)
                channels_last = min(channels_last, seconds(net, last))
                net.to(memory_format=torch.contiguous_format)
            diff = float((plain_out - last_out).abs().max())
            print(
                f"{name:<22}{batch:>6}{plain / batch * 1e3:>13.1f}{channels_last / batch * 1e3:>22.1f}"
                f"{plain / channels_last:>7.2f}x{diff:>10.1e}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
