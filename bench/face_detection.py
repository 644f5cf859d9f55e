"""Time of the packaged face detector (MTCNN, `masc_ui/metrics/faces/mtcnn.py`) by image size.

scikit-image's astronaut photo resized to each size (one face), detected --repeats times after one untimed
detection; prints the best seconds, the faces found and the process's peak resident memory so far (it only grows:
the sizes run from small to large, so each row's peak is that size's or an earlier one's).

    python bench/face_detection.py
    python bench/face_detection.py --sizes 512x512 4000x3000 --repeats 1

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from skimage import data

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from masc_ui.metrics.faces.mtcnn import MtcnnFaceDetector  # noqa: E402


def size(text: str) -> tuple[int, int]:
    width, height = (int(v) for v in text.lower().split("x"))
    return width, height


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes",
        nargs="+",
        type=size,
        default=[size(s) for s in ("256x256", "512x512", "1024x1024", "2048x2048", "4000x3000")],
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    detector = MtcnnFaceDetector()
    photo = Image.fromarray(data.astronaut())
    print(
        f"MTCNN (packaged weights), CPU, torch {torch.__version__}, {torch.get_num_threads()} threads, best of "
        f"{args.repeats}\n"
    )
    print(f"{'size':>11}{'seconds':>10}{'faces':>7}{'peak RSS MB':>13}")
    for width, height in sorted(args.sizes, key=lambda s: s[0] * s[1]):
        rgb = np.asarray(photo.resize((width, height)))
        found = detector.detect(rgb)
        best = float("inf")
        for _ in range(args.repeats):
            start = time.perf_counter()
            detector.detect(rgb)
            best = min(best, time.perf_counter() - start)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{width:>5}x{height:<5}{best:>10.3f}{len(found.faces):>7}{peak:>13.0f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
