"""A small dataset with masks in a fresh SQLite store, shared by the batch tests."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "datasets"))
from dataset_trees import tiny_image, tiny_mask  # noqa: E402

from masc_ui.datasets import read_layout  # noqa: E402
from masc_ui.datasets.ingest import ingest  # noqa: E402


def write_manifest(folder: Path, subjects: int = 2, outputs: int = 3, masks: bool = True,
                   size: tuple[int, int] = (64, 48)) -> Path:
    """`subjects` x `outputs` samples (one reference per subject), with masks when `masks`; returns the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in range(subjects):
        tiny_image(folder / f"ref{s}.png", seed=s, size=size)
        tiny_mask(folder / f"ref{s}_mask.png", size=size)
        for k in range(outputs):
            tiny_image(folder / f"out{s}_{k}.png", seed=100 + s * outputs + k, size=size)
            tiny_mask(folder / f"out{s}_{k}_mask.png", size=size)
            row = {"ref": f"ref{s}.png", "out": f"out{s}_{k}.png", "prompt": f"a photo of a toy{s} on a table",
                   "subject": f"toy{s}", "method": f"m{k % 2}", "key": f"toy{s}-{k}", "category": "object"}
            if masks:
                row.update(ref_mask=f"ref{s}_mask.png", out_mask=f"out{s}_{k}_mask.png")
            rows.append(row)
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return manifest


def import_manifest(store, dataset: str, manifest: Path) -> None:
    summary = ingest(store, dataset, "manifest", read_layout("manifest", manifest))
    assert summary.problems == [], summary.problems
