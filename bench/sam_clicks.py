"""Interactive SAM speed: the first click on an image (image encoder + decoder) against the following clicks on
the same image (decoder only, the embedding comes from the cache), in float32 and in bfloat16 (the image encoder's
precision under the policy), and the time from upload to the first mask when the user clicks `--delay` seconds
(default 2) after the upload: encoded on the click vs encoded on upload (`SamService.encode_in_background`),
measured side by side in one run.

    python bench/sam_clicks.py                       # tiny demo architecture and a ViT-B-sized model, CPU
    python bench/sam_clicks.py --models vit_b --device cuda --size 1024x768

Weights are random (the speed of a network does not depend on its weight values), so no download is needed.
Printed per model and precision: median seconds of a first click, of a following click, and of the bare prompt
encoder + mask decoder + upsampling on a precomputed embedding; first/following (how much the cache saves);
upload -> first mask with the image encoded on the click and encoded on upload, and how long the user waits after
clicking in the latter (the decoder alone when the encoding finished before the click); how many times the image
encoder ran (1 warm-up image + one per first click and per upload: following clicks never run it).
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
from masc_ui.models.precision import hardware_report
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


def bench(
    variant: str, size: tuple[int, int], first: int, clicks: int, device: str, dtype: str, delay: float
) -> dict[str, float]:
    torch.manual_seed(0)
    service = SamService(variant, device=device, cache_size=3 * first + 1, model=build_sam(variant), dtype=dtype)
    rng = np.random.default_rng(0)
    w, h = size

    def new_image() -> Image.Image:
        return Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))

    service.predict(new_image(), points=[(w / 2, h / 2, 1)])  # warm-up: allocator, kernels, lazy init
    images = [new_image() for _ in range(first)]
    first_s = [_timed(lambda im=im: service.predict(im, points=[(w / 3, h / 3, 1)]), device) for im in images]
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
        coords = torch.as_tensor(
            transform.apply_coords(np.asarray([p[:2] for p in pts]), emb.original_size),
            dtype=torch.float,
            device=device,
        )[None]
        labels = torch.as_tensor([[p[2] for p in pts]], dtype=torch.int, device=device)
        boxes = torch.as_tensor(
            transform.apply_boxes(np.asarray(box), emb.original_size), dtype=torch.float, device=device
        )

        def decoder_only() -> None:
            with torch.inference_mode():
                sparse, dense = sam.prompt_encoder(points=(coords, labels), boxes=boxes, masks=None)
                low, _ = sam.mask_decoder(
                    image_embeddings=emb.features,
                    image_pe=sam.prompt_encoder.get_dense_pe(),
                    sparse_prompt_embeddings=sparse,
                    dense_prompt_embeddings=dense,
                    multimask_output=True,
                )
                (sam.postprocess_masks(low, emb.input_size, emb.original_size) > 0).cpu().numpy()

        decoder_s.append(_timed(decoder_only, device))
    on_click, on_upload, waits = [], [], []
    for _ in range(first):  # interleaved, fresh images: encoded when clicked vs encoded from the upload on
        total, _ = upload_then_click(service, new_image(), delay, pre_encode=False, device=device)
        on_click.append(total)
        total, wait = upload_then_click(service, new_image(), delay, pre_encode=True, device=device)
        on_upload.append(total)
        waits.append(wait)
    service.close()
    return {
        "first": statistics.median(first_s),
        "following": statistics.median(follow_s),
        "decoder": statistics.median(decoder_s),
        "on_click": statistics.median(on_click),
        "on_upload": statistics.median(on_upload),
        "wait": statistics.median(waits),
        "encoder_runs": service.cache_info().misses,
    }


def upload_then_click(
    service: SamService, image: Image.Image, delay: float, *, pre_encode: bool, device: str
) -> tuple[float, float]:
    """(seconds from upload to the first mask, seconds the user waits after clicking) when the user clicks the
    image's centre `delay` seconds after uploading it; with `pre_encode` the upload starts the background encoding."""
    w, h = image.size
    start = time.perf_counter()
    if pre_encode:
        service.encode_in_background(image)
    time.sleep(delay)  # the user looks at the image, then clicks
    clicked = time.perf_counter()
    service.predict(image, points=[(w / 2, h / 2, 1)])
    _sync(device)
    done = time.perf_counter()
    return done - start, done - clicked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="vit_tiny,vit_b", help="comma-separated SAM variants")
    parser.add_argument("--dtypes", default="float32,bfloat16", help="image-encoder precisions")
    parser.add_argument("--size", default="1024x768", help="image WxH in pixels")
    parser.add_argument("--first", type=int, default=2, help="first clicks (and uploads) to time, one new image each")
    parser.add_argument("--clicks", type=int, default=10, help="following clicks to time")
    parser.add_argument("--delay", type=float, default=2.0, help="seconds between upload and first click")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    w, h = (int(v) for v in args.size.lower().split("x"))
    device = pick_device(args.device)
    print(
        f"device {device} ({hardware_report(device).describe()}), image {w}x{h}, {args.first} first clicks, "
        f"{args.clicks} following clicks, click {args.delay:g} s after upload, torch threads "
        f"{torch.get_num_threads()}"
    )
    print(
        f"{'model':<9} {'encoder':<9} {'first s':>8} {'following s':>12} {'decoder s':>10} {'first/following':>16} "
        f"{'upload->mask: on click':>23} {'on upload':>10} {'wait':>6} {'encoder runs':>13}"
    )
    for variant in args.models.split(","):
        for dtype in args.dtypes.split(","):
            r = bench(variant.strip(), (w, h), args.first, args.clicks, device, dtype.strip(), args.delay)
            print(
                f"{variant:<9} {dtype:<9} {r['first']:>8.3f} {r['following']:>12.4f} {r['decoder']:>10.4f} "
                f"{r['first'] / r['following']:>15.1f}x {r['on_click']:>22.2f}s {r['on_upload']:>9.2f}s "
                f"{r['wait']:>5.2f}s {r['encoder_runs']:>13}"
            )


if __name__ == "__main__":
    main()
