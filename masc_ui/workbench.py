"""The use cases behind the web app (and the CLI): build a sample, score it, explain it, segment it.

Storage-backed use cases (save, rate, next task, browse, export) are in `workbench_store.py`, agreement in
`workbench_agreement.py`, masks in `workbench_masks.py`; `Workbench` ties them to one Settings object and
one ModelRegistry shared by every browser session. Nothing here imports gradio.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from PIL import Image

from .errors import InputError
from .imaging import as_mask_array, image_sha256, load_image
from .metrics.sample import MetricValue, Sample
from .models.loading import pick_device, pick_dtype
from .models.registry import ModelRegistry
from .settings import Settings
from .scratch import ScratchSpace
from .workbench_profile import ResolvedProfile, resolve_profile

Progress = Callable[[float, str], None]
"""progress(fraction in [0, 1], what is happening now)."""

DEMO_BANNER = ("demo weights: numbers are not meaningful. These are tiny random checkpoints built offline so "
               "that the app runs anywhere. To load real weights, start with `--profile paper` (or `fast`) "
               "where the Hugging Face Hub is reachable, or point MASC_SIGLIP_MODEL, MASC_CLIP_MODEL, ... at "
               "local checkpoint folders (see README, 'Model profiles and offline use').")


@dataclass(frozen=True)
class Status:
    """What the status line shows."""

    profile: ResolvedProfile
    device: str
    dtype: str
    loaded: tuple[str, ...]

    @property
    def is_demo(self) -> bool:
        return self.profile.name == "demo"

    def line(self) -> str:
        loaded = ", ".join(self.loaded) if self.loaded else "none yet (loaded on first use)"
        asked = f" (asked: {self.profile.requested})" if self.profile.requested != self.profile.name else ""
        return f"profile: {self.profile.name}{asked} · device: {self.device} · dtype: {self.dtype} · models loaded: {loaded}"


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


class Workbench:
    """One per process: the settings in force, the shared model registry, and the caches they own."""

    def __init__(self, settings: Settings, *, profile: ResolvedProfile | None = None,
                 models: ModelRegistry | None = None, store: object | None = None) -> None:
        self.profile = profile or ResolvedProfile(settings.profile, settings.profile, None)
        self.settings = settings if settings.profile == self.profile.name else settings.replace(profile=self.profile.name)
        self.models = models or ModelRegistry()
        self.device = pick_device(self.settings.device)
        self.dtype = str(pick_dtype(self.settings.dtype, self.device)).replace("torch.", "")
        self._scores: OrderedDict[str, ScoreReport] = OrderedDict()
        self._scores_lock = threading.Lock()
        from .workbench_store import StoreUseCases

        self.records = StoreUseCases(self.settings, store)
        self.scratch = ScratchSpace()
        """Folders for files handed to the browser (exports, an opened sample's extra references)."""
        """Database use cases (save, rating tasks, browse, export), opened on first use."""

    @classmethod
    def open(cls, settings: Settings) -> "Workbench":
        """Resolve `auto`, write the demo weights when the demo profile needs them, return the workbench."""
        from .models.demo import write_demo_weights

        models = ModelRegistry()
        profile = resolve_profile(settings, models)
        if profile.name == "demo":
            write_demo_weights(settings.resolved_demo_weights_dir)
        return cls(settings, profile=profile, models=models)

    # --- status ------------------------------------------------------------------------------------------

    def status(self) -> Status:
        loaded = tuple(dict.fromkeys(_key_text(k) for k in self.models.loaded() if not _is_service_key(k)))
        return Status(self.profile, self.device, self.dtype, loaded)

    # --- samples -----------------------------------------------------------------------------------------

    def load_image(self, src: object, name: str) -> Image.Image:
        """A user image (path, bytes, PIL, array) as RGB PIL, refused with a clear InputError when unusable."""
        if src is None:
            raise InputError(f"{name} is missing: upload an image (drag and drop, paste or pick a file)")
        return load_image(src, name=name, max_pixels=self.settings.max_image_pixels)

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

    # --- scoring -----------------------------------------------------------------------------------------

    def metric_specs(self) -> list:
        from .metrics.registry import list_metrics

        return list_metrics()

    def score(self, sample: Sample, names: Sequence[str] | None = None, progress: Progress | None = None) -> ScoreReport:
        """Every metric in `names` (default: all) for `sample`, each backbone run once; a metric that cannot be
        computed gets a row with value None and the reason. Results are cached per (sample content, metrics)."""
        from .metrics.registry import list_metrics, score_metrics

        specs = {s.name: s for s in list_metrics()}
        wanted = list(specs) if not names else list(names)
        unknown = [n for n in wanted if n not in specs]
        if unknown:
            raise InputError(f"unknown metric(s) {unknown}; choose among {list(specs)}")
        key = sample_fingerprint(sample) + ":" + ",".join(wanted)
        with self._scores_lock:
            if key in self._scores:
                self._scores.move_to_end(key)
                return dataclasses.replace(self._scores[key], cached=True)
        if progress:
            progress(0.05, f"scoring {len(wanted)} metric(s) on {self.device}")
        started = time.perf_counter()
        results = score_metrics([sample], wanted, self.settings, self.models, missing="nan")
        rows, values = [], {}
        for name in wanted:
            spec = specs[name]
            mv = results.get(name, [None])[0]
            if mv is None:
                mv = MetricValue(name, math.nan, "the metric returned no value")
            values[name] = mv
            finite = mv.value is not None and not math.isnan(mv.value)
            rows.append(ScoreRow(name, spec.display_name, float(mv.value) if finite else None,
                                 None if finite else (mv.reason or "not computable"),
                                 float(spec.range[0]), float(spec.range[1]), bool(spec.higher_is_better),
                                 spec.convention))
        report = ScoreReport(rows, values, seconds=time.perf_counter() - started)
        with self._scores_lock:
            self._scores[key] = report
            while len(self._scores) > 64:
                self._scores.popitem(last=False)
        if progress:
            progress(1.0, "done")
        return report

    def stored_report(self, sample_id: int) -> ScoreReport:
        """The latest stored value of every registered metric of a stored sample (computed with its current
        masks), as a score table; metrics never stored show `n/a (not computed yet: press Run)`."""
        from .metrics.registry import list_metrics

        latest = self.records.latest_values(sample_id)
        rows, values = [], {}
        for spec in list_metrics():
            rec = latest.get(spec.name)
            value = None if rec is None else rec.value
            reason = "not computed yet: press Run" if rec is None else (rec.reason or "not computable")
            rows.append(ScoreRow(spec.name, spec.display_name, value, None if value is not None else reason,
                                 float(spec.range[0]), float(spec.range[1]), bool(spec.higher_is_better),
                                 spec.convention))
        return ScoreReport(rows, values, cached=True)

    def explain(self, sample: Sample, progress: Progress | None = None):
        """MaSC patch maps of `sample` drawn as heat maps and correspondence lines (`workbench_explain.Explanation`)."""
        from .metrics.masc import MaSC
        from .models.profiles import model_ids
        from .workbench_explain import explain_sample

        s = self.settings
        masc = self.models.get(
            ("masc-explainer", model_ids(s).siglip, self.device),
            lambda: MaSC(model_ids(s).siglip, self.device, s.naflex_max_patches, s.fg_threshold, self.dtype,
                         s.stripper, models=self.models))
        if progress:
            progress(0.1, "computing MaSC patch maps")
        return explain_sample(masc, sample)

    def save_sample(self, sample: Sample, *, dataset: str, method: str | None = None,
                    mask_sources: dict[str, str] | None = None, names: Sequence[str] | None = None,
                    user: str | None = None, progress: Progress | None = None):
        """Score `sample` (cached when already scored) and store it with its masks and every value
        (`workbench_store.Saved`). Saving the same thing twice adds nothing."""
        report = self.score(sample, names, progress=progress)
        if progress:
            progress(0.9, "writing to the database")
        return self.records.save(sample, report.values, dataset=dataset, method=method,
                                 mask_sources=mask_sources or {}, user=user)

    # --- segmentation ------------------------------------------------------------------------------------

    def sam_predict(self, image: Image.Image, points: list[tuple[float, float, int]],
                    box: tuple[float, float, float, float] | None):
        """Segment Anything on `image` from pixel clicks (x, y, label 1|0) and/or a box (x0, y0, x1, y1);
        returns the service's SamPrediction (multimask candidates, scores, best). Embeddings are cached per image."""
        from .segmentation import build_sam_service

        service = self.models.get(("sam-service", self.settings.profile), lambda: build_sam_service(self.settings, self.models))
        return service.predict(image, points=points, box=box, multimask=True)

    def segment_by_name(self, image: Image.Image, subject: str | None):
        """Text-prompted segmentation of `subject` in `image`; returns the TextSegmentation (mask, doubtful, reason)."""
        from .segmentation import build_text_segmenter

        if not subject or not subject.strip():
            raise InputError("subject name is empty: type the subject's name (e.g. 'cat') to segment it by name")
        seg = self.models.get(("text-segmenter", self.settings.profile),
                              lambda: build_text_segmenter(self.settings, self.models))
        return seg.segment(image, subject.strip(), self.settings.text_seg_threshold, self.settings.text_seg_min_fraction)

    def mask_from_brush(self, editor_value: object, size: tuple[int, int]) -> np.ndarray:
        """Bool (H, W) mask = alpha of the ImageEditor's brush layer(s), at the image's `size` (W, H)."""
        from .segmentation.masks import mask_from_editor

        return np.asarray(mask_from_editor(editor_value, size), dtype=bool)


def sample_fingerprint(sample: Sample) -> str:
    """SHA-256 over the sample's images, masks, prompt and subject (what a score depends on)."""
    h = hashlib.sha256()
    for img in (*sample.refs, sample.out):
        h.update(image_sha256(img).encode())
    for m in (*sample.ref_masks, sample.out_mask):
        h.update(b"-" if m is None else hashlib.sha256(np.ascontiguousarray(m, dtype=np.float32).tobytes()).digest())
        h.update(b"" if m is None else str(np.shape(m)).encode())
    h.update(repr((sample.prompt, sample.subject, len(sample.ref_masks))).encode())
    return h.hexdigest()


def _num(x: float) -> str:
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:g}"


_SERVICE_KEYS = ("sam-service", "text-segmenter", "masc-explainer", "masc-engine", "auto-profile",
                 "demo-checkpoints")
"""Registry keys of the workbench's own wrappers (their models appear under their own keys)."""


def _is_service_key(key: object) -> bool:
    return isinstance(key, tuple) and bool(key) and key[0] in _SERVICE_KEYS


def _key_text(key: object) -> str:
    """`kind: checkpoint folder/id name` of a model registry key such as ("siglip", "/x/siglip2-naflex", "cpu")."""
    if isinstance(key, tuple) and len(key) >= 2 and isinstance(key[1], str):
        return f"{key[0]}: {Path(key[1]).name or key[1]}"
    return str(key)
