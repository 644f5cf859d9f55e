"""Synthetic benchmark trees and manifests made of tiny images, for the importer and batch tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

CAPTIONS = {
    ("animal", "00"): ["kitten"] + [f"a photo of a kitten number {i}" for i in range(9)],
    ("object", "03"): ["Red Backpack"] + [f"a red backpack in scene {i}" for i in range(9)],
}
METHODS = ("dreambooth_sd", "blip_diffusion")


def tiny_image(path: Path, seed: int, size: tuple[int, int] = (24, 16)) -> Path:
    """Write a small random RGB image (format from the suffix)."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(path)
    return path


def tiny_mask(path: Path, size: tuple[int, int] = (24, 16)) -> Path:
    arr = np.zeros((size[1], size[0]), dtype=np.uint8)
    arr[4:12, 6:18] = 255
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path)
    return path


def write_dreambench(
    root: Path, *, images: bool = True, samples: bool = True, human: bool = True, gpt: bool = True
) -> Path:
    """A DreamBench++ tree: 2 collections x 2 methods x prompts 0..2 (seed 0), ratings of both groups."""
    for (cat, idx), lines in CAPTIONS.items():
        (root / "captions" / cat).mkdir(parents=True, exist_ok=True)
        (root / "captions" / cat / f"{idx}.txt").write_text("\n".join(lines) + "\n")
        if images:
            tiny_image(root / "images" / cat / f"{idx}.jpg", seed=int(idx))
    collections = ["live_subject_animal_00_kitten", "object_03_red_backpack"]
    if samples:
        for m, method in enumerate(METHODS):
            for c, coll in enumerate(collections):
                for p in range(3):
                    tiny_image(root / "samples" / method / "tgt_image" / coll / f"{p}_0.png", seed=100 * m + 10 * c + p)
                    tiny_image(root / "samples" / method / "src_image" / coll / f"{p}_0.png", seed=c)
                    text = root / "samples" / method / "text" / coll / f"{p}_0.txt"
                    text.parent.mkdir(parents=True, exist_ok=True)
                    text.write_text(f"prompt file {p} for {coll}")
    if human:
        for g, group in enumerate(("group1", "group2")):
            folder = root / "data_human_rating" / "merged_data" / group
            folder.mkdir(parents=True, exist_ok=True)
            for method in METHODS:
                for crit in ("cp", "pf"):
                    data = {f"{coll}-{p}": (p + g + c) % 5 for c, coll in enumerate(collections) for p in range(3)}
                    (folder / f"{method}-{crit}.json").write_text(json.dumps(data))
    if gpt:
        for folder in ("concept_preservation_full", "prompt_following_full"):
            (root / "data_gpt_rating" / folder).mkdir(parents=True, exist_ok=True)
            for method in METHODS:
                data = {f"{coll}-{p}": float(p + 1) for coll in collections for p in range(3)}
                (root / "data_gpt_rating" / folder / f"{method}.json").write_text(json.dumps(data))
    return root


def write_manifest(
    folder: Path, subjects: int = 2, outputs: int = 3, masks: bool = True, size: tuple[int, int] = (64, 48)
) -> Path:
    """`subjects` x `outputs` samples (one reference per subject), with masks when `masks`; returns the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in range(subjects):
        tiny_image(folder / f"ref{s}.png", seed=s, size=size)
        tiny_mask(folder / f"ref{s}_mask.png", size=size)
        for k in range(outputs):
            tiny_image(folder / f"out{s}_{k}.png", seed=100 + s * outputs + k, size=size)
            tiny_mask(folder / f"out{s}_{k}_mask.png", size=size)
            row = {
                "ref": f"ref{s}.png",
                "out": f"out{s}_{k}.png",
                "prompt": f"a photo of a toy{s} on a table",
                "subject": f"toy{s}",
                "method": f"m{k % 2}",
                "key": f"toy{s}-{k}",
                "category": "object",
            }
            if masks:
                row.update(ref_mask=f"ref{s}_mask.png", out_mask=f"out{s}_{k}_mask.png")
            rows.append(row)
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return manifest


def import_manifest(store, dataset: str, manifest: Path) -> None:
    from masc_ui.datasets import read_layout
    from masc_ui.workbench.ingest import ingest

    summary = ingest(store, dataset, "manifest", read_layout("manifest", manifest))
    assert summary.problems == [], summary.problems
