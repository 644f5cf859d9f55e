"""Video frames decoded and scored per second: decoding overlapped with scoring (`masc_ui.imaging.iter_frames`, a
background decoder) vs sequential (`read_frames`, then scoring), in one run.

Generates (in memory) a 5 s 1280x720 H.264 clip at 24 fps with PyAV, opens it once (`open_video`, which decodes
every frame to count them), then scores `--frames` evenly sampled frames (default: all 120) with the tiny demo
GME-Qwen2-VL embedder (the model of GmeScore/NexusScore; `--gme` for a real checkpoint), batches of 8, in both modes:

- sequential: decode (+ RGB + PNG + SHA-256 of each frame) all sampled frames, then embed them;
- overlapped: embed each batch while the background thread decodes the next frames.

Prints frames per second of both, their ratio, and the fraction of the sequential time spent decoding. Not a test:
numbers depend on the machine and its load; read the ratio, measured side by side here.

    python bench/video_frames.py
    python bench/video_frames.py --frames 32 --repeats 3
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from masc_ui.imaging import InputVideo, iter_frames, linspace_indices, open_video, read_frames  # noqa: E402
from masc_ui.metrics.video.gme import batched, load_gme  # noqa: E402
from masc_ui.settings import Settings  # noqa: E402

WIDTH, HEIGHT, FPS, SECONDS = 1280, 720, 24, 5


def make_clip() -> bytes:
    """A 5 s 720p H.264 clip: a smooth moving gradient with a bouncing square (compresses like real footage would
    not, but decodes at a realistic per-frame cost)."""
    import av

    yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH]
    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = {"preset": "veryfast", "crf": "23"}
        for i in range(FPS * SECONDS):
            frame = np.stack([(xx // 5 + 3 * i) % 256, (yy // 3 + 2 * i) % 256, ((xx + yy) // 8 + i) % 256], -1).astype(
                np.uint8
            )
            x = (40 * i) % (WIDTH - 200)
            frame[200:400, x : x + 200] = (240, 240, 240)
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return buf.getvalue()


def sequential(video: InputVideo, indices: list[int], gme) -> tuple[float, float]:
    """(decode seconds, score seconds)."""
    started = time.perf_counter()
    frames = read_frames(video, indices)
    decoded = time.perf_counter()
    for batch in batched([f.image for f in frames], gme.batch_size):
        gme.image_embeddings(batch)
    return decoded - started, time.perf_counter() - decoded


def overlapped(video: InputVideo, indices: list[int], gme) -> float:
    started = time.perf_counter()
    for batch in batched((f.image for f in iter_frames(video, indices, prefetch=2 * gme.batch_size)), gme.batch_size):
        gme.image_embeddings(batch)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=FPS * SECONDS, help="frames to sample (linspace); default all")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each mode (the best is reported)")
    parser.add_argument("--gme", help="GME checkpoint (default: the tiny demo one, built in a temp folder)")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    settings = Settings(device=args.device, dtype="float32")
    with tempfile.TemporaryDirectory() as tmp:
        model_id = args.gme
        if model_id is None:
            from masc_ui.models.demo import write_demo_weights

            model_id = str(write_demo_weights(Path(tmp), ["gme-qwen2-vl"])["gme-qwen2-vl"])
        gme = load_gme(model_id, settings)
        data = make_clip()
        started = time.perf_counter()
        video = open_video(data, name="720p clip")
        open_s = time.perf_counter() - started
        indices = linspace_indices(video.frame_count, args.frames)
        print(
            f"clip: {video.size[0]}x{video.size[1]}, {video.frame_count} frames, {video.duration_s:.1f} s, "
            f"{len(data) / 2**20:.1f} MiB; open_video (count pass) {open_s:.2f} s; scoring {len(indices)} frames "
            f"with GME {model_id} on {args.device}"
        )
        gme.image_cache.clear()
        seq, ovl = [], []
        for _ in range(args.repeats):  # alternate, fresh caches, so load drifts hit both modes alike
            gme.image_cache.clear()
            seq.append(sequential(video, indices, gme))
            gme.image_cache.clear()
            ovl.append(overlapped(video, indices, gme))
        decode_s, score_s = min(seq, key=sum)
        seq_s, ovl_s = decode_s + score_s, min(ovl)
        n = len(indices)
        print(
            f"sequential : {n / seq_s:7.2f} frames/s  ({seq_s:.2f} s = decode {decode_s:.2f} s + score {score_s:.2f} s;"
            f" decoding {100 * decode_s / seq_s:.0f}% of the time)"
        )
        print(f"overlapped : {n / ovl_s:7.2f} frames/s  ({ovl_s:.2f} s)")
        print(
            f"overlapped / sequential throughput: {seq_s / ovl_s:.2f}x "
            f"(bound by max(decode, score): {seq_s / max(decode_s, score_s):.2f}x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
