"""Batch throughput: `masc-ui batch` end to end (database reads and writes included) vs the reference package's
per-sample loop, in one run, plus the cost of resuming a half-finished run.

For each backbone size (a tiny and a base-size random SigLIP2 NaFlex checkpoint, built once in --workdir) it
generates a DreamBench++-shaped dataset on disk (--subjects references of mixed aspect ratios, each with
--outputs 512x512 outputs, masks on everything), imports it into a fresh SQLite database (not timed), and times

- `masc-metric` 0.3.0: for each sample, open its images and masks from disk and call `MaSC.score()` (what its
  users run);
- `masc-ui batch`'s use case (`BatchScoring.run`) for CP and PF: read samples, images and masks from the database and blob store,
  score in batches with the reference cache, write every value with its provenance (one transaction per chunk);
- resuming: the same dataset imported again, scored half-way with `--limit`, then the rest (the resumed run
  skips the done half by provenance); and a rerun with nothing left to do (planning and skipping only).

Models are loaded before timing for both engines. Prints samples/s of both, their ratio, the largest |dCP| and
|dPF| between the stored values and the reference's, and the resume timings. Numbers depend on the machine and
its load; read the ratios.

    python bench/batch_throughput.py                       # tiny and base, 3 subjects x 9 outputs, 256 patches
    python bench/batch_throughput.py --sizes base --subjects 5 --budget 1024 --device cuda
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads import OUT_SIZE, REF_SIZES, SIGLIP_SIZES, naflex_checkpoint, random_ellipse, random_image  # noqa: E402

from masc_ui.datasets import read_layout  # noqa: E402
from masc_ui.imaging import load_image, load_mask_file  # noqa: E402
from masc_ui.metrics.registry import get_scorer  # noqa: E402
from masc_ui.models.loaded_models import ModelRegistry  # noqa: E402
from masc_ui.settings import Settings  # noqa: E402
from masc_ui.workbench import build_workbench  # noqa: E402
from masc_ui.workbench.batch import BatchOptions  # noqa: E402
from masc_ui.workbench.ingest import ingest  # noqa: E402
from storage import open_store  # noqa: E402

SUBJECTS = ["kitten", "backpack", "teapot", "robot toy", "sneaker", "vase", "clock"]
PROMPTS = [
    "a photo of a {} on a sandy beach at sunset",
    "a {} in a snowy forest",
    "a {} on a wooden table in a kitchen",
    "a {} floating in outer space with stars",
    "a watercolor painting of a {}",
    "a {} in the style of pixel art",
    "an oil painting of a {} in a museum",
    "a {} made of glass on a city street",
    "a giant {} next to the Eiffel tower",
]
METRICS = ("cp", "pf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes", nargs="+", choices=list(SIGLIP_SIZES), default=["tiny", "base"], help="backbone sizes"
    )
    parser.add_argument("--subjects", type=int, default=3, help="references (each with --outputs outputs)")
    parser.add_argument("--outputs", type=int, default=9, help="outputs per reference (DreamBench++: 9 prompts)")
    parser.add_argument("--budget", type=int, default=256, help="NaFlex patch budget")
    parser.add_argument("--batch-size", type=int, default=16, help="masc-ui batch's chunk size")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, ...")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "masc-bench",
        help="where checkpoints are built (and reused); the datasets go to a temp folder inside",
    )
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    import masc

    n = args.subjects * args.outputs
    print(
        f"batch throughput: {args.subjects} subjects x {args.outputs} outputs = {n} samples, metrics cp+pf, "
        f"NaFlex budget {args.budget}, device {args.device}, float32, {torch.get_num_threads()} threads, "
        f"masc-metric {masc.__version__}, SQLite\n"
    )
    header = f"{'size':<6}{'engine':<34}{'samples/s':>10}{'seconds':>10}"
    results = []
    for size in args.sizes:
        ckpt = naflex_checkpoint(args.workdir, size)
        run_dir = Path(tempfile.mkdtemp(prefix=f"batch-{size}-", dir=args.workdir))
        try:
            results.append(_bench_size(size, ckpt, run_dir, args, masc))
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
    print(header)
    print("-" * len(header))
    for r in results:
        print(f"{r['size']:<6}{'masc-metric per-sample loop':<34}{n / r['theirs_s']:>10.3f}{r['theirs_s']:>10.2f}")
        print(f"{r['size']:<6}{'masc-ui batch (DB writes included)':<34}{n / r['ours_s']:>10.3f}{r['ours_s']:>10.2f}")
        print(
            f"{r['size']:<6}ratio {r['theirs_s'] / r['ours_s']:.2f}x   max |dCP| {r['d_cp']:.1e}   "
            f"max |dPF| {r['d_pf']:.1e}   values written {r['written']}"
        )
        print(
            f"{r['size']:<6}resume: first half ({r['half_n']} samples) {r['half_s']:.2f} s; resumed run scored the "
            f"other {r['rest_n']} in {r['rest_s']:.2f} s, skipping {r['skipped']} done; rerun with nothing left "
            f"{r['noop_s']:.3f} s"
        )
    return 0


def _bench_size(size: str, ckpt: Path, run_dir: Path, args: argparse.Namespace, masc) -> dict:
    manifest = _write_dataset(run_dir / "files", args.subjects, args.outputs, seed=7)
    settings = Settings(
        profile="demo",
        siglip_model=str(ckpt),
        naflex_max_patches=args.budget,
        device=args.device,
        dtype="float32",
        data_dir=run_dir / "data",
    )
    models = ModelRegistry()
    with open_store(None, settings.data_dir) as store:
        for dataset in ("full", "resume"):
            summary = ingest(store, dataset, "manifest", read_layout("manifest", manifest))
            assert not summary.problems, summary.problems
        rows = [json.loads(line) for line in manifest.read_text().splitlines()]
        theirs = masc.MaSC(str(ckpt), device=args.device, naflex_max_patches=args.budget)
        get_scorer("cp", settings, models).provenance()  # load our engine before timing, as theirs is
        _warm_up(theirs, store, settings, models)

        start = time.perf_counter()
        reference = [_score_theirs(theirs, manifest.parent, row) for row in rows]
        theirs_s = time.perf_counter() - start

        get_scorer("cp", settings, models).engine().clear_caches()
        start = time.perf_counter()
        batch = build_workbench(settings, store=store, models=models).batch
        full = batch.run(BatchOptions("full", METRICS, batch_size=args.batch_size))
        ours_s = time.perf_counter() - start
        assert full.values_written == 2 * len(rows) and not full.failures, full.lines()
        d_cp, d_pf = _differences(store, rows, reference)

        engine = get_scorer("cp", settings, models).engine()
        half = len(rows) // 2
        engine.clear_caches()  # the "resume" dataset holds the same images: no encodings carried over
        start = time.perf_counter()
        batch.run(BatchOptions("resume", METRICS, batch_size=args.batch_size, limit=half))
        half_s = time.perf_counter() - start
        engine.clear_caches()  # as after a kill: the resumed process starts with empty caches
        start = time.perf_counter()
        rest = batch.run(BatchOptions("resume", METRICS, batch_size=args.batch_size))
        rest_s = time.perf_counter() - start
        start = time.perf_counter()
        noop = batch.run(BatchOptions("resume", METRICS, batch_size=args.batch_size))
        noop_s = time.perf_counter() - start
        assert noop.scored_samples == 0
    return dict(
        size=size,
        theirs_s=theirs_s,
        ours_s=ours_s,
        d_cp=d_cp,
        d_pf=d_pf,
        written=full.values_written,
        half_n=half,
        half_s=half_s,
        rest_n=rest.scored_samples,
        rest_s=rest_s,
        skipped=rest.already_done["cp"],
        noop_s=noop_s,
    )


def _score_theirs(theirs, folder: Path, row: dict):
    ref = load_image(folder / row["ref"], name="ref")
    out = load_image(folder / row["out"], name="out")
    ref_mask = load_mask_file(folder / row["ref_mask"]).astype(np.uint8) * 255
    out_mask = load_mask_file(folder / row["out_mask"]).astype(np.uint8) * 255
    return theirs.score(ref, ref_mask, out, out_mask, row["prompt"], row["subject"])


def _differences(store, rows: list[dict], reference: list) -> tuple[float, float]:
    d_cp = d_pf = 0.0
    for row, ref in zip(rows, reference):
        sample = store.samples.get_by_key("full", row["key"])
        latest = store.metrics.latest(sample.id)
        d_cp = max(d_cp, abs(latest["cp"].value - float(ref.cp)))
        d_pf = max(d_pf, abs(latest["pf"].value - float(ref.pf)))
    return d_cp, d_pf


def _warm_up(theirs, store, settings: Settings, models: ModelRegistry) -> None:
    """One small untimed call of each engine (allocator, kernels), outside the timed datasets."""
    rng = np.random.default_rng(1)
    img = random_image(rng, (64, 64))
    mask = random_ellipse((64, 64), rng)
    theirs.score(img, mask, img, mask, "a warm-up prompt", None)
    engine = get_scorer("cp", settings, models).engine()
    engine.score(img, mask, img, mask, "a warm-up prompt", None)
    engine.clear_caches()


def _write_dataset(folder: Path, n_subjects: int, n_outputs: int, seed: int) -> Path:
    """PNG images and masks plus a manifest.jsonl; returns the manifest."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in range(n_subjects):
        size = REF_SIZES[s % len(REF_SIZES)]
        subject = SUBJECTS[s % len(SUBJECTS)]
        random_image(rng, size).save(folder / f"ref{s}.png")
        Image.fromarray(random_ellipse(size, rng)).save(folder / f"ref{s}_mask.png")
        for k in range(n_outputs):
            random_image(rng, OUT_SIZE).save(folder / f"out{s}_{k}.png")
            Image.fromarray(random_ellipse(OUT_SIZE, rng)).save(folder / f"out{s}_{k}_mask.png")
            rows.append(
                {
                    "ref": f"ref{s}.png",
                    "ref_mask": f"ref{s}_mask.png",
                    "out": f"out{s}_{k}.png",
                    "out_mask": f"out{s}_{k}_mask.png",
                    "prompt": PROMPTS[k % len(PROMPTS)].format(subject),
                    "subject": subject,
                    "key": f"{s}-{k}",
                    "method": "random",
                }
            )
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return manifest


if __name__ == "__main__":
    sys.exit(main())
