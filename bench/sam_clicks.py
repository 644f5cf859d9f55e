"""Interactive SAM speed: the first click on an image (image encoder + decoder) against the following clicks on
the same image (decoder only, the embedding comes from the cache), measured side by side in one run.

    python bench/sam_clicks.py                       # tiny demo architecture and a ViT-B-sized model, CPU
    python bench/sam_clicks.py --models vit_b --device cuda --size 1024x768

Weights are random (the speed of a network does not depend on its weight values), so no download is needed.
Printed per model: median seconds of a first click, of a following click, and of the bare prompt encoder +
mask decoder + upsampling on a precomputed embedding; then first/following (how much the cache saves) and
following/decoder (what a cached click costs beyond the decoder: hashing the image, validation, copies), and
how many times the image encoder ran (1 warm-up image + one per first click: following clicks never run it).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from PIL import Image

from segment_anything.utils.transforms import ResizeLongestSide

from masc_ui.models.loading import pick_device
from masc_ui.segmentation import SamService, build_sam


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn, device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - start


def bench(variant: str, size: tuple[int, int], first: int, clicks: int, device: str) -> dict[str, float]:
    torch.manual_seed(0)
    service = SamService(variant, device=device, cache_size=first + 1, model=build_sam(variant))
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)) for _ in range(first + 1)]
    w, h = size
    service.predict(images[-1], points=[(w / 2, h / 2, 1)])  # warm-up: allocator, kernels, lazy init
    first_s = [_timed(lambda im=im: service.predict(im, points=[(w / 3, h / 3, 1)]), device) for im in images[:first]]
    image = images[0]
    emb = service.embed(image)
    sam = service.model
    transform = ResizeLongestSide(sam.image_encoder.img_size)
    follow_s, decoder_s = [], []
    for i in range(clicks):  # a growing click sequence with a box, as in the UI; each click timed next to
        # the bare decoder on the same prompts, so both see the same machine load
        pts = [(float(rng.uniform(0, w)), float(rng.uniform(0, h)), int(j % 2 == 0)) for j in range(1 + i % 4)]
        box = (w * 0.1, h * 0.1, w * 0.9, h * 0.9)
        follow_s.append(_timed(lambda: service.predict(image, points=pts, box=box), device))
        coords = torch.as_tensor(transform.apply_coords(np.asarray([p[:2] for p in pts]), emb.original_size),
                                 dtype=torch.float, device=device)[None]
        labels = torch.as_tensor([[p[2] for p in pts]], dtype=torch.int, device=device)
        boxes = torch.as_tensor(transform.apply_boxes(np.asarray(box), emb.original_size), dtype=torch.float,
                                device=device)

        def decoder_only() -> None:
            with torch.inference_mode():
                sparse, dense = sam.prompt_encoder(points=(coords, labels), boxes=boxes, masks=None)
                low, _ = sam.mask_decoder(image_embeddings=emb.features, image_pe=sam.prompt_encoder.get_dense_pe(),
                                          sparse_prompt_embeddings=sparse, dense_prompt_embeddings=dense,
                                          multimask_output=True)
                (sam.postprocess_masks(low, emb.input_size, emb.original_size) > 0).cpu().numpy()

        decoder_s.append(_timed(decoder_only, device))
    return {"first": statistics.median(first_s), "following": statistics.median(follow_s),
            "decoder": statistics.median(decoder_s), "encoder_runs": service.cache_info().misses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="vit_tiny,vit_b", help="comma-separated SAM variants")
    parser.add_argument("--size", default="1024x768", help="image WxH in pixels")
    parser.add_argument("--first", type=int, default=2, help="first clicks to time (one new image each)")
    parser.add_argument("--clicks", type=int, default=10, help="following clicks to time")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    w, h = (int(v) for v in args.size.lower().split("x"))
    device = pick_device(args.device)
    print(f"device {device}, image {w}x{h}, {args.first} first clicks, {args.clicks} following clicks, "
          f"torch threads {torch.get_num_threads()}")
    print(f"{'model':<9} {'first s':>9} {'following s':>12} {'decoder s':>10} {'first/following':>16} "
          f"{'following/decoder':>18} {'encoder runs':>13}")
    for variant in args.models.split(","):
        r = bench(variant.strip(), (w, h), args.first, args.clicks, device)
        print(f"{variant:<9} {r['first']:>9.4f} {r['following']:>12.4f} {r['decoder']:>10.4f} "
              f"{r['first'] / r['following']:>15.1f}x {r['following'] / r['decoder']:>17.2f}x "
              f"{r['encoder_runs']:>13}")


if __name__ == "__main__":
    main()
