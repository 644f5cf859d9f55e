"""Forward passes of the Score tab's flow on one pair: Run (every metric), then Explain, then Save, counted per
backbone tower (images and texts that went through it), on the tiny demo checkpoints.

    python bench/forward_counts.py [--pair cat-on-grass]

Counts come from a global PyTorch forward hook on the towers (SigLIP2 vision/text, CLIP vision/text, DINO), so
the same script measures another checkout the same way: `PYTHONPATH=/path/to/other/checkout python
bench/forward_counts.py`. The pair has 2 distinct images (a reference and an output); CLIP-I-Seg adds a third
(the segmented output) for the CLIP tower.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOWERS = {
    "SiglipVisionModel",
    "Siglip2VisionModel",
    "SiglipTextModel",
    "Siglip2TextModel",
    "CLIPVisionModel",
    "CLIPTextModel",
    "ViTModel",
}
"""The towers' classes in transformers 5 (each forward of one is one pass of a batch through a backbone)."""
METRICS = ["cp", "pf", "clip_i", "clip_i_seg", "clip_t", "clipscore", "pickscore", "dino_i"]


def _batch(args: tuple, kwargs: dict) -> int:
    for value in (*args, *kwargs.values()):
        if hasattr(value, "shape") and len(value.shape) >= 2:
            return int(value.shape[0])
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", default="cat-on-grass")
    args = ap.parse_args(argv)

    import torch

    import masc_ui
    import masc_ui.workbench as workbench
    from masc_ui.models.demo import write_demo_weights
    from masc_ui.settings import Settings

    try:
        from masc_ui.workbench.examples import load_example
    except ImportError:  # a checkout from before masc_ui/workbench/
        from masc_ui.workbench_examples import load_example

    counts: Counter = Counter()
    """(tower class, id of the tower module) -> images or texts that went through it."""

    def hook(module, hook_args, hook_kwargs, output):
        if type(module).__name__ in TOWERS:
            counts[type(module).__name__, id(module)] += _batch(hook_args, hook_kwargs)

    tmp = Path(tempfile.mkdtemp(prefix="masc-forwards-"))
    weights = tmp / "demo-weights"
    write_demo_weights(weights)
    settings = Settings(profile="demo", demo_weights_dir=weights, device="cpu", dtype="float32", data_dir=tmp / "data")
    if hasattr(workbench, "build_workbench"):
        wb = workbench.build_workbench(settings)
        make, score, explain, save = wb.scoring.make_sample, wb.scoring.score, wb.scoring.explain, wb.saving.save
    else:  # a checkout from before the one composition root
        wb = workbench.Workbench(settings)
        make, score, explain, save = wb.make_sample, wb.score, wb.explain, wb.save_sample
    ex = load_example(args.pair)
    sample = make([ex.ref], ex.out, ex.prompt, ex.subject, [ex.ref_mask], ex.out_mask)

    def call(fn, *a, **kw):
        try:
            return fn(*a, user=None, **kw)
        except TypeError:  # an older Workbench without the acting user
            return fn(*a, **kw)

    handle = torch.nn.modules.module.register_module_forward_hook(hook, with_kwargs=True)
    steps = {}
    try:
        call(score, sample, METRICS)
        steps["Run"] = Counter(counts)
        call(explain, sample)
        steps["Run + Explain"] = Counter(counts)
        call(save, sample, dataset="forwards", names=METRICS)
        steps["Run + Explain + Save"] = Counter(counts)
    finally:
        handle.remove()
    owners = {}  # id of a module -> the checkpoint folder of the loaded model holding it
    for key in wb.models.loaded():
        loaded = wb.models.get(key, None)
        for obj in loaded if isinstance(loaded, tuple) else (loaded,):
            model = getattr(getattr(obj, "backbone", obj), "model", obj)
            if isinstance(model, torch.nn.Module):
                for module in model.modules():
                    owners.setdefault(id(module), Path(str(key[1])).name)
    (wb.close if hasattr(wb, "close") else wb.records.close)()
    named = {
        step: Counter({f"{cls} of {owners.get(mid, '?')}": n for (cls, mid), n in c.items()})
        for step, c in steps.items()
    }
    steps = named
    print(f"code {Path(masc_ui.__file__).resolve().parent.parent} · pair {args.pair} · metrics {','.join(METRICS)}")
    towers = sorted(set().union(*steps.values()))
    print(f"{'tower':<44}" + "".join(f"{step:>22}" for step in steps))
    for tower in towers:
        print(f"{tower:<44}" + "".join(f"{c[tower]:>22}" for c in steps.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
