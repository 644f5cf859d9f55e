"""MaSC throughput: the reference package's per-sample loop vs our batched, cached engine, in one run.

Builds (once, cached in --workdir) a base-size random SigLIP2 NaFlex checkpoint (hidden 768, 12 layers, 12 heads,
both towers) and scores a DreamBench++-shaped workload: references of mixed aspect ratios, each with the outputs of
9 prompts (square images), masks on both. For each patch budget it times

- `masc-metric` 0.3.0: `MaSC.score()` once per sample (what its users run), and
- `masc_ui.metrics.MaSC.score_many()` (padded batches, reference encoded once, text cache), fresh caches,

and prints output images scored per second for both, their ratio, the largest |dCP| and |dPF| between the two,
and the peak memory of each phase (CPU: resident set growth; CUDA: peak allocated). Not a test: numbers depend
on the machine and its load; the ratio is what to read.

    python bench/masc_throughput.py                      # 256 and 1024 patches, 1 reference x 9 outputs each
    python bench/masc_throughput.py --refs 2 --budgets 256
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from masc_ui.metrics import MaSC  # noqa: E402
from masc_ui.metrics.sample import Sample  # noqa: E402
from masc_ui.models.registry import ModelRegistry  # noqa: E402
from workloads import OUT_SIZE, REF_SIZES, naflex_checkpoint, random_ellipse, random_image  # noqa: E402

PROMPTS = [
    "a photo of a {} on a sandy beach at sunset", "a {} in a snowy forest", "a {} on a wooden table in a kitchen",
    "a {} floating in outer space with stars", "a watercolor painting of a {}", "a {} in the style of pixel art",
    "an oil painting of a {} in a museum", "a {} made of glass on a city street", "a giant {} next to the Eiffel tower",
]
SUBJECTS = ["kitten", "backpack", "teapot", "robot toy", "sneaker"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", type=int, nargs="+", default=[256, 1024], help="NaFlex patch budgets")
    parser.add_argument("--refs", type=int, default=1, help="references per budget (each with 9 outputs)")
    parser.add_argument("--outputs", type=int, default=9, help="outputs per reference (DreamBench++: 9 prompts)")
    parser.add_argument("--batch-size", type=int, default=10, help="our engine's batch size")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, ...")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's; 1 is steadier on a "
                                                    "machine shared with other jobs)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "masc-bench",
                        help="where the base-size checkpoint is built (and reused)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    import masc

    ckpt = naflex_checkpoint(args.workdir, "base")
    print(f"MaSC throughput: random SigLIP2 NaFlex base (hidden 768, 12 layers) at {ckpt}")
    print(f"device {args.device}, float32, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"masc-metric {masc.__version__}")
    print(f"workload per budget: {args.refs} reference(s) x {args.outputs} outputs = {args.refs * args.outputs} "
          f"samples; our batch size {args.batch_size}\n")
    theirs = masc.MaSC(str(ckpt), device=args.device, naflex_max_patches=args.budgets[0])
    models = ModelRegistry()  # our engines for the different budgets share one loaded backbone
    header = f"{'budget':>6}  {'engine':<22}{'images/s':>10}{'seconds':>10}{'peak +MiB':>10}"
    print(header)
    print("-" * len(header))
    ratios = []
    for budget in args.budgets:
        samples = _workload(args.refs, args.outputs, seed=budget)
        theirs.naflex_max_patches = budget
        ours = MaSC(str(ckpt), device=args.device, naflex_max_patches=budget, models=models)
        _warm_up(theirs, ours, samples[0])
        ref_run = _measure(lambda: [theirs.score(s.refs[0], s.ref_masks[0], s.out, s.out_mask, s.prompt, s.subject)
                                    for s in samples], args.device)
        ours.clear_caches()
        our_run = _measure(lambda: ours.score_many(samples, batch_size=args.batch_size), args.device)
        n = len(samples)
        d_cp = max(abs(a.cp - b.cp) for a, b in zip(ref_run.value, our_run.value))
        d_pf = max(abs(a.pf - b.pf) for a, b in zip(ref_run.value, our_run.value))
        ratio = ref_run.seconds / our_run.seconds
        ratios.append(ratio)
        print(f"{budget:>6}  {'masc-metric (loop)':<22}{n / ref_run.seconds:>10.3f}{ref_run.seconds:>10.1f}"
              f"{ref_run.peak_mib:>10.0f}")
        print(f"{budget:>6}  {'masc_ui (batched)':<22}{n / our_run.seconds:>10.3f}{our_run.seconds:>10.1f}"
              f"{our_run.peak_mib:>10.0f}")
        print(f"{budget:>6}  ratio {ratio:.2f}x   max |dCP| {d_cp:.1e}   max |dPF| {d_pf:.1e}")
        if math.isnan(d_cp) or math.isnan(d_pf):
            print("        (NaN difference: one engine returned NaN where the other did not)")
    print(f"\nthroughput ratio (ours / reference): {', '.join(f'{r:.2f}x' for r in ratios)}; target >= 1.8x on CPU")
    return 0


def _workload(n_refs: int, n_outputs: int, seed: int) -> list[Sample]:
    rng = np.random.default_rng(seed)
    samples = []
    for r in range(n_refs):
        size = REF_SIZES[r % len(REF_SIZES)]
        ref, ref_mask = random_image(rng, size), random_ellipse(size, rng)
        subject = SUBJECTS[r % len(SUBJECTS)]
        for k in range(n_outputs):
            samples.append(Sample(refs=(ref,), out=random_image(rng, OUT_SIZE), prompt=PROMPTS[k % len(PROMPTS)].format(subject),
                                  subject=subject, ref_masks=(ref_mask,), out_mask=random_ellipse(OUT_SIZE, rng)))
    return samples


def _warm_up(theirs, ours: MaSC, sample: Sample) -> None:
    """One small untimed call each, so first-call costs (allocator, kernels) are not timed."""
    rng = np.random.default_rng(1)
    img, mask = random_image(rng, (64, 64)), random_ellipse((64, 64), rng)
    theirs.score(img, mask, img, mask, "a warm-up prompt", None)
    ours.score(img, mask, img, mask, "a warm-up prompt", None)
    ours.clear_caches()


@dataclass
class _Run:
    value: list
    seconds: float
    peak_mib: float


def _measure(fn, device: str) -> _Run:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        start = time.perf_counter()
        value = fn()
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        return _Run(value, seconds, (torch.cuda.max_memory_allocated() - base) / 2**20)
    sampler = _RssSampler()
    start = time.perf_counter()
    try:
        value = fn()
    finally:
        seconds = time.perf_counter() - start
        peak = sampler.stop()
    return _Run(value, seconds, peak)


class _RssSampler:
    """Peak growth of this process's resident set during a phase, sampled every 10 ms (Linux /proc)."""

    def __init__(self) -> None:
        self.base = self.peak = _rss_bytes()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(0.01):
            self.peak = max(self.peak, _rss_bytes())

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())
        return (self.peak - self.base) / 2**20


def _rss_bytes() -> int:
    try:
        with open(f"/proc/{os.getpid()}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


if __name__ == "__main__":
    sys.exit(main())
