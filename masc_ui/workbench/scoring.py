"""Scoring use cases: build a sample from decoded inputs, score it with every asked metric (each backbone once,
results cached per sample content), explain MaSC with patch maps on the same engine, score files for the CLI.

Images arrive as `InputImage`s decoded once at the edge (upload, CLI file, database blob); every cache below
them (the result cache here, MaSC's encodings, the CLIP/DINO/PickScore embeddings) keys by their `sha256`.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..caching import LruCache
from ..errors import InputError
from ..imaging import InputImage, as_mask_array, load_mask_file, open_image
from ..metrics.sample import MetricValue, Sample
from ..models.registry import ModelRegistry
from ..settings import Settings
from .explain import Explanation

Progress = Callable[[float, str], None]
"""progress(fraction in [0, 1], what is happening now)."""
RESULT_CACHE_SIZE = 64
"""Score reports kept by the workbench's result cache (one per distinct sample content and metric list)."""
MIN_IMAGE_SIDE = 32
"""Smallest width and height, in pixels, of an image scored or saved: below it there is nothing for a person or a
metric to judge (a 32 x 32 image is already only 2 x 2 patches of a 16-pixel ViT), so such uploads are refused."""
NOT_STORED = "not stored for this sample: press Run to compute it"
"""Reason shown for a metric a stored sample has no value of."""
INPUT_WORDS = {"reference": "a reference image", "prompt": "the prompt", "out_mask": "a mask of the output"}
"""What the user calls each input a metric may lack (`Needs.missing` names; `ref_masks[i]` is handled apart)."""


@dataclass(frozen=True)
class ScoreRow:
    """One metric's line in the score table."""

    metric: str
    display_name: str
    value: float | None
    """None when the metric could not be computed (see `reason`)."""
    reason: str | None
    lo: float
    hi: float
    higher_is_better: bool
    convention: str

    def text(self, x100: bool = False) -> str:
        if self.value is None:
            return f"n/a ({self.reason or 'not computed'})"
        return f"{self.value * 100:.1f}" if x100 else f"{self.value:.4f}"

    @property
    def range_text(self) -> str:
        return f"[{_num(self.lo)}, {_num(self.hi)}]"

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


@dataclass
class ScoreReport:
    """Every asked metric for one sample, in registry order, plus the raw values for storage."""

    rows: list[ScoreRow]
    values: dict[str, MetricValue] = field(default_factory=dict)
    seconds: float = 0.0
    """Wall time of the computation that produced the values."""
    cached: bool = False
    """True when the values came from the workbench's result cache (same images, masks, prompt, metrics)."""


def score_row(spec: Any, value: float | None, reason: str | None) -> ScoreRow:
    """The table row of registry spec `spec` with `value` (None: not computable, `reason` says why)."""
    return ScoreRow(spec.name, spec.display_name, value, None if value is not None else (reason or "not computable"),
                    float(spec.range[0]), float(spec.range[1]), bool(spec.higher_is_better), spec.convention)


def sample_fingerprint(sample: Sample) -> str:
    """SHA-256 over what a score depends on: the images' content hashes, the masks, prompt and subject."""
    h = hashlib.sha256()
    for img in (*sample.refs, sample.out):
        h.update(img.sha256.encode())
    for m in (*sample.ref_masks, sample.out_mask):
        h.update(b"-" if m is None else hashlib.sha256(np.ascontiguousarray(m, dtype=np.float32).tobytes()).digest())
        h.update(b"" if m is None else str(np.shape(m)).encode())
    h.update(repr((sample.prompt, sample.subject, len(sample.ref_masks))).encode())
    return h.hexdigest()


class Scoring:
    """Scoring for one process: the settings in force, the shared model registry, the result cache."""

    def __init__(self, settings: Settings, models: ModelRegistry, device: str) -> None:
        self.settings = settings
        self.models = models
        self.device = device
        self._results: LruCache[ScoreReport] = LruCache(RESULT_CACHE_SIZE)

    # --- inputs ----------------------------------------------------------------------------------------------

    def load_image(self, src: object, name: str) -> InputImage:
        """A user image (path, bytes, PIL, array, or an `InputImage` returned as it is) decoded once, refused
        with a clear InputError when unusable."""
        if src is None:
            raise InputError(f"{name} is missing: upload an image (drag and drop, paste or pick a file)")
        return check_judgeable(open_image(src, name=name, max_pixels=self.settings.max_image_pixels))

    def make_sample(self, refs: Sequence[object], out: object, prompt: str | None, subject: str | None,
                    ref_masks: Sequence[np.ndarray | None] = (), out_mask: np.ndarray | None = None) -> Sample:
        """Validate the pieces of a sample (images by `load_image`, masks by `as_mask_array`)."""
        if not refs:
            raise InputError("reference image is missing: upload at least one image of the subject")
        ref_imgs = tuple(self.load_image(r, f"reference image {i + 1}") for i, r in enumerate(refs))
        out_img = self.load_image(out, "output image")
        masks = tuple(None if m is None else as_mask_array(m, name=f"mask of reference {i + 1}")
                      for i, m in enumerate(ref_masks))
        omask = None if out_mask is None else as_mask_array(out_mask, name="mask of the output")
        return Sample(refs=ref_imgs, out=out_img, prompt=(prompt or "").strip() or None,
                      subject=(subject or "").strip() or None, ref_masks=masks, out_mask=omask)

    def sample_from_files(self, refs: Sequence[Path], out: Path, *, ref_masks: Sequence[Path] = (),
                          out_mask: Path | None = None, prompt: str | None = None,
                          subject: str | None = None) -> Sample:
        """A sample from image and mask files (`masc-ui score`); each file named by its flag in errors."""
        if ref_masks and len(ref_masks) != len(refs):
            raise InputError(f"{len(refs)} --ref image(s) but {len(ref_masks)} --ref-mask file(s): "
                             "give one mask per reference, in the same order")
        limit = self.settings.max_image_pixels
        return Sample(
            refs=tuple(check_judgeable(open_image(r, name=f"--ref {r}", max_pixels=limit)) for r in refs),
            out=check_judgeable(open_image(out, name=f"--out {out}", max_pixels=limit)), prompt=prompt, subject=subject,
            ref_masks=tuple(load_mask_file(m, name=f"--ref-mask {m}", max_pixels=limit) for m in ref_masks),
            out_mask=None if out_mask is None else load_mask_file(out_mask, name=f"--out-mask {out_mask}",
                                                                  max_pixels=limit))

    # --- scoring ---------------------------------------------------------------------------------------------

    def metric_specs(self) -> list:
        from ..metrics.registry import list_metrics

        return list_metrics()

    def score(self, sample: Sample, names: Sequence[str] | None = None, *, user: str | None,
              progress: Progress | None = None) -> ScoreReport:
        """Every metric in `names` (default: all) for `sample`, each backbone run once; a metric that cannot be
        computed gets a row with value None and the reason. Results are cached per (sample content, metrics)."""
        from ..metrics.registry import list_metrics, score_metrics

        specs = {s.name: s for s in list_metrics()}
        wanted = list(specs) if not names else list(names)
        unknown = [n for n in wanted if n not in specs]
        if unknown:
            raise InputError(f"unknown metric(s) {unknown}; choose among {list(specs)}")
        key = sample_fingerprint(sample) + ":" + ",".join(wanted)
        hit = self._results.get(key)
        if hit is not None:
            return dataclasses.replace(hit, cached=True)
        if progress:
            progress(0.05, f"scoring {len(wanted)} metric(s) on {self.device}")
        started = time.perf_counter()
        results = score_metrics([sample], wanted, self.settings, self.models, missing="nan")
        rows, values = [], {}
        for name in wanted:
            mv = results.get(name, [None])[0]
            if mv is None:
                mv = MetricValue(name, math.nan, "the metric returned no value")
            values[name] = mv
            finite = mv.value is not None and not math.isnan(mv.value)
            lacking = specs[name].needs.missing(sample)
            reason = missing_inputs_text(lacking) if lacking and not finite else mv.reason
            rows.append(score_row(specs[name], float(mv.value) if finite else None, reason))
        report = ScoreReport(rows, values, seconds=time.perf_counter() - started)
        self._results.put(key, report)
        if progress:
            progress(1.0, "done")
        return report

    def masc_engine(self) -> Any:
        """The MaSC engine the registry's `cp`/`pf` scorers use (same registry key, same encoding caches)."""
        from ..metrics.registry import get_scorer

        return get_scorer("cp", self.settings, self.models).engine()

    def explain(self, sample: Sample, *, user: str | None, progress: Progress | None = None) -> "Explanation":
        """MaSC patch maps of `sample` drawn as heat maps and correspondence lines (`explain.Explanation`), on
        the engine Run used: images Run encoded are not encoded again."""
        from .explain import explain_sample

        if progress:
            progress(0.1, "computing MaSC patch maps")
        return explain_sample(self.masc_engine(), sample)

    def masc_record(self, sample: Sample, *, user: str | None) -> dict[str, Any]:
        """MaSC CP and PF of `sample` with every diagnostic, as `{"cp", "pf", "extras"}` (NaN as None; extras
        hold the provenance), on the settings' engine (`masc-ui score`)."""
        from ..metrics.masc_factory import build_masc, result_record

        return result_record(build_masc(self.settings, self.models).score_many([sample])[0])

    def score_values(self, sample: Sample, names: Sequence[str], *, user: str | None) -> dict[str, MetricValue]:
        """metric -> value of `sample` for each of `names` (`masc-ui score --metrics`); a missing input raises."""
        from ..metrics.registry import score_metrics

        return {name: vs[0] for name, vs in score_metrics([sample], names, self.settings, self.models).items()}


def check_judgeable(image: InputImage) -> InputImage:
    """`image` when both its sides are at least `MIN_IMAGE_SIDE` pixels, else InputError naming it."""
    w, h = image.size
    if min(w, h) < MIN_IMAGE_SIDE:
        raise InputError(f"{image.name} is {w}x{h} pixels: too small to judge. Images need at least {MIN_IMAGE_SIDE} "
                         f"pixels on each side; upload the full-size image")
    return image


def missing_inputs_text(lacking: Sequence[str]) -> str:
    """A score-table reason for the inputs a metric lacks (`Needs.missing` names), in the Score tab's words,
    e.g. `needs a mask of reference 1 and the prompt: add them, then Run`."""
    words = []
    for name in lacking:
        if name.startswith("ref_masks["):
            words.append(f"a mask of reference {int(name[len('ref_masks['):-1]) + 1}")
        else:
            words.append(INPUT_WORDS.get(name, name))
    masks = any(n.startswith("ref_masks[") or n == "out_mask" for n in lacking)
    how = "draw them under Masks, then Run" if masks else "add them, then Run"
    return f"needs {' and '.join(words)}: {how}"


def stored_rows(latest: Mapping[str, Any]) -> list[ScoreRow]:
    """Score rows of every registered metric from stored records (`value`, `reason`); metrics never stored
    show `n/a (not stored for this sample: press Run to compute it)`."""
    from ..metrics.registry import list_metrics

    rows = []
    for spec in list_metrics():
        rec = latest.get(spec.name)
        value = None if rec is None else rec.value
        reason = NOT_STORED if rec is None else rec.reason
        rows.append(score_row(spec, value, reason))
    return rows


def _num(x: float) -> str:
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:g}"
