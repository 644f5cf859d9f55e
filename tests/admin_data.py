"""A small judged dataset for the admin views' tests (Leaderboard, Compare, pairwise results): three methods, each
with one output per reference, every output a real photo (the Score tab's example, recoloured per method so the
outputs differ), the examples' subject masks, synthetic metric values with known per-method order, 0-4 ratings by
two raters and pairwise judgments by three imported raters. Everything is written straight into the store (no model
runs)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image, ImageEnhance

from masc_ui.workbench.examples import EXAMPLES_DIR

METHODS = ("alpha", "beta", "gamma")
STRENGTH = {"alpha": 1.0, "beta": 0.0, "gamma": -1.0}
"""Humans (ratings and votes) and metric `cp` prefer alpha > beta > gamma; `clip_i` prefers them in reverse."""
PROMPT = "a cat sitting on grass"


def _jpeg(img: Image.Image) -> bytes:
    buffer = io.BytesIO()
    img.save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def _png(mask: Image.Image) -> bytes:
    buffer = io.BytesIO()
    mask.point(lambda v: 255 if v >= 128 else 0).save(buffer, format="PNG")
    return buffer.getvalue()


def add_judged_dataset(store: Any, dataset: str = "lb", references: int = 4) -> list[Any]:
    """Store `dataset` (see the module docstring); returns its samples, references outer, methods inner."""
    from storage import ExternalPairJudgment

    ex = EXAMPLES_DIR / "cat-on-grass"
    ref_photo = Image.open(ex / "ref.jpg").convert("RGB").resize((192, 128))
    out_photo = Image.open(ex / "out.jpg").convert("RGB").resize((160, 137))
    ref_mask = Image.open(ex / "ref_mask.png").convert("L").resize(ref_photo.size, Image.NEAREST)
    out_mask = Image.open(ex / "out_mask.png").convert("L").resize(out_photo.size, Image.NEAREST)
    rng = np.random.default_rng(5)
    provenance = {"model_id": "synthetic", "code_version": "test"}
    for rater in ("r1", "r2"):
        store.ratings.ensure_rater(rater)
    samples = []
    for r in range(references):
        ref = store.images.add(_jpeg(ref_photo.rotate(3 * r)))
        for m, method in enumerate(METHODS):
            out = ImageEnhance.Color(out_photo.rotate(2 * r)).enhance(1.0 - 0.4 * m)
            s = store.samples.add(
                dataset,
                references=[ref],
                output=store.images.add(_jpeg(out)),
                prompt=PROMPT,
                subject=("cat", "kitten")[r % 2],
                category=("animal", "pet")[r % 2],
                method=method,
                external_key=f"r{r}/{method}",
            )
            samples.append(s)
            store.masks.add(s.id, "reference", 0, _png(ref_mask.rotate(3 * r)), source="imported")
            store.masks.add(s.id, "output", 0, _png(out_mask.rotate(2 * r)), source="imported")
            store.metrics.record(s.id, "cp", 0.5 + 0.1 * STRENGTH[method] + rng.normal(0, 0.03), provenance=provenance)
            store.metrics.record(
                s.id, "clip_i", 0.7 - 0.05 * STRENGTH[method] + rng.normal(0, 0.02), provenance=provenance
            )
            for rater in ("r1", "r2"):
                score = int(np.clip(round(2 + STRENGTH[method] + rng.normal(0, 0.6)), 0, 4))
                store.ratings.rate(rater, s.id, "cp", score)
    by_ref = [samples[i : i + len(METHODS)] for i in range(0, len(samples), len(METHODS))]
    for _k, rater in enumerate(("p1", "p2", "p3")):
        items = []
        for group in by_ref:
            for i in range(len(group)):
                for j in range(i + 1, len(group)):
                    left, right = (group[i], group[j]) if rng.random() < 0.5 else (group[j], group[i])
                    for criterion in ("cp", "pf"):
                        d = STRENGTH[left.method] - STRENGTH[right.method]
                        u = rng.random()
                        p_left = 0.85 / (1 + np.exp(-2 * d))
                        winner = "left" if u < p_left else ("tie" if u < p_left + 0.15 else "right")
                        items.append(ExternalPairJudgment(left.id, right.id, criterion, winner))
        store.pairwise.import_external(rater, items)
    return samples
