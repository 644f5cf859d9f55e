"""Storage-backed use cases: save a scored sample, rating tasks, browse, export, open a stored sample.

`StoreUseCases` wraps one `storage.Store` (opened lazily, shared by every session) and turns storage
errors into `StoreError` (a WorkbenchError) with the storage message, so the UI shows them as they are.
"""
from __future__ import annotations

import io
import math
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image

from .errors import InputError, WorkbenchError
from .imaging import load_image, load_mask_file
from .metrics.sample import MetricValue, Sample
from .settings import Settings

CRITERIA = ("cp", "pf")
SCORES = (0, 1, 2, 3, 4)
ANCHORS = {
    "cp": ("Concept preservation: is this the same subject as in the reference?", (
        "0 — a different subject: nothing of the reference's identity is left",
        "1 — same kind of thing, but most identifying details (shape, colour, texture) are wrong",
        "2 — recognisably related, with several clear differences in shape, colour or details",
        "3 — the same subject with small differences in a detail or two",
        "4 — the same subject: shape, colour, texture and details all match"),),
    "pf": ("Prompt following: apart from the subject, does the image show what the prompt asks?", (
        "0 — ignores the prompt: none of the asked scene, action or style is there",
        "1 — a small part of the prompt is shown, most of it is missing or wrong",
        "2 — about half of the prompt is shown",
        "3 — most of the prompt is shown, one element is missing or off",
        "4 — everything the prompt asks for is shown"),),
}
"""criterion -> (question, anchor text of levels 0..4)."""
MASK_SOURCE_TO_STORE = {"drawn": "drawn", "sam": "sam", "imported": "imported", "text-prompted": "text"}
EXPORT_FORMATS = ("csv", "jsonl")


class StoreError(WorkbenchError):
    """The database or blob store refused or failed an operation; the message says what and what to do."""


@dataclass(frozen=True)
class Saved:
    sample_id: int
    message: str
    new_masks: int
    new_values: int


@dataclass(frozen=True)
class TaskView:
    """What a rater sees: blind (no metric values, no method), images decoded, their previous answers."""

    sample_id: int
    refs: list[Image.Image]
    out: Image.Image
    prompt: str
    presentation_order: int
    scores: dict[str, int | None]
    """criterion -> this rater's current score (None = not rated, or skipped/flagged)."""
    status: str | None
    """This rater's current status on the sample (`rated`, `skipped`, `flagged`) or None when new."""


@dataclass(frozen=True)
class RaterProgress:
    rated: int
    assigned: int
    total: int

    def text(self) -> str:
        return f"rated {self.rated} / assigned {self.assigned} / total {self.total}"


@dataclass
class StoredSample:
    """A stored sample opened for the Score tab: images as RGB PIL, current masks as bool arrays."""

    sample_id: int
    refs: list[Image.Image]
    out: Image.Image
    prompt: str
    subject: str
    ref_masks: list[np.ndarray | None]
    out_mask: np.ndarray | None
    mask_sources: dict[str, str] = field(default_factory=dict)


class StoreUseCases:
    """Everything the app does with the database. One per process; thread-safe (the Store is)."""

    def __init__(self, settings: Settings, store: Any | None = None) -> None:
        self._settings = settings
        self._store = store
        self._lock = threading.Lock()

    @property
    def store(self) -> Any:
        if self._store is None:
            with self._lock:
                if self._store is None:
                    from storage import open_store

                    self._store = _guard(lambda: open_store(self._settings.database_url, self._settings.data_dir))
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # --- save --------------------------------------------------------------------------------------------

    def save(self, sample: Sample, values: dict[str, MetricValue], *, dataset: str, method: str | None,
             mask_sources: dict[str, str], user: str | None) -> Saved:
        """Store images, the sample, its current masks and every value (NaN ones with their reason).
        Idempotent: the same sample, masks and values saved again add nothing."""
        if not sample.prompt:
            raise InputError("prompt is empty: type the prompt the output was generated from before saving")
        if not sample.subject:
            raise InputError("subject name is empty: type the subject's name (e.g. 'cat') before saving")
        if not (dataset or "").strip():
            raise InputError("dataset name is empty: type a dataset name (e.g. 'workbench') to save into")
        st = self.store

        def work() -> Saved:
            refs = [st.images.add(_png(img), media_type="image/png") for img in sample.refs]
            out = st.images.add(_png(sample.out), media_type="image/png")
            rec = st.samples.add(dataset.strip(), references=refs, output=out, prompt=sample.prompt,
                                 subject=sample.subject, method=(method or "").strip() or None)
            current = st.masks.current(rec.id)
            new_masks = 0
            wanted = [(("reference", i), m, f"ref{i}") for i, m in enumerate(sample.ref_masks)]
            wanted.append((("output", 0), sample.out_mask, "out"))
            for (role, pos), mask, key in wanted:
                if mask is None:
                    continue
                png = _mask_png(mask)
                have = current.get((role, pos))
                if have is not None and have.sha256 == _sha(png):
                    continue
                source = MASK_SOURCE_TO_STORE.get(mask_sources.get(key, "drawn"), "drawn")
                st.masks.add(rec.id, role, pos, png, source=source, created_by=user)
                new_masks += 1
            # The mask versions these values were computed with: only those the session had (a stored mask
            # the session lacks, e.g. one cleared before Run, played no part in them).
            now = st.masks.current(rec.id)
            mask_ids = tuple(now[place].id for place, mask, _ in wanted if mask is not None and place in now)
            new_values = self._record_values(rec.id, values, mask_ids)
            return Saved(rec.id, f"saved as sample #{rec.id} in '{rec.dataset}': {new_masks} new mask(s), "
                                 f"{new_values} new metric value(s)"
                                 + ("" if new_masks or new_values else " (nothing changed since the last save)"),
                         new_masks, new_values)
        return _guard(work)

    def _record_values(self, sample_id: int, values: dict[str, MetricValue], mask_ids: tuple[int, ...]) -> int:
        from storage import MetricInput, provenance_key

        st = self.store
        latest = st.metrics.latest(sample_id)
        items = []
        for name, mv in values.items():
            value = None if mv.value is None or math.isnan(mv.value) else float(mv.value)
            prov = _provenance(mv.provenance)
            old = latest.get(name)
            if (old is not None and old.provenance_key == provenance_key(prov) and old.value == value
                    and set(old.mask_version_ids) == set(mask_ids)):
                continue
            items.append(MetricInput(sample_id=sample_id, metric=name, value=value, provenance=prov,
                                     reason=mv.reason if value is None else None, extras=_jsonable(mv.extras),
                                     mask_version_ids=mask_ids))
        if items:
            st.metrics.record_many(items)
        return len(items)

    # --- rating ------------------------------------------------------------------------------------------

    def next_task(self, rater: str, *, dataset: str | None = None) -> TaskView | None:
        st = self.store
        _guard(lambda: st.ratings.ensure_rater(rater))
        task = _guard(lambda: st.tasks.next_task(rater, dataset, overlap_k=self._settings.rating_overlap))
        return None if task is None else self._view(task)

    def previous_task(self, rater: str, before_sample_id: int | None, *, dataset: str | None = None) -> TaskView | None:
        task = _guard(lambda: self.store.tasks.previous_task(rater, before_sample_id=before_sample_id,
                                                             dataset=dataset))
        return None if task is None else self._view(task)

    def task_for(self, rater: str, sample_id: int) -> TaskView:
        """The task view of `sample_id` with `rater`'s current answers (for going back and forth)."""
        st = self.store
        sample = _guard(lambda: st.samples.get(sample_id))
        ratings = {r.criterion: r for r in _guard(lambda: st.ratings.current(rater=rater, sample_id=sample_id))}
        order = next((r.presentation_order for r in ratings.values() if r.presentation_order), 0)
        return self._view_of(sample, order, ratings)

    def progress(self, rater: str, *, dataset: str | None = None) -> RaterProgress:
        p = _guard(lambda: self.store.tasks.progress(rater, dataset, overlap_k=self._settings.rating_overlap))
        return RaterProgress(p.rated, p.assigned, p.total)

    def submit(self, rater: str, sample_id: int, scores: dict[str, int | None], *, status: str = "rated",
               seconds_spent: float | None = None, presentation_order: int | None = None,
               attempts: int = 3, wait_s: float = 0.5) -> None:
        """Commit `rater`'s answers for a sample (both criteria in one transaction). `status` `rated` needs a
        score 0..4 for each criterion; `skipped` / `flagged` store no scores. Retried `attempts` times on
        storage failures; raises StoreError (the answers are NOT stored) when every attempt failed."""
        if status not in ("rated", "skipped", "flagged"):
            raise InputError(f"status must be rated, skipped or flagged, got {status!r}")
        if status == "rated":
            missing = [c for c in CRITERIA if scores.get(c) is None]
            if missing:
                names = {"cp": "concept preservation", "pf": "prompt following"}
                raise InputError("choose a score (0-4) for " + " and ".join(names[c] for c in missing)
                                 + " before submitting (or skip / flag the task)")
            payload = {c: int(scores[c]) for c in CRITERIA}
        else:
            payload = {c: None for c in CRITERIA}
        st = self.store
        last: Exception | None = None
        for attempt in range(attempts):
            try:
                st.ratings.rate_sample(rater, sample_id, payload, status=status, seconds_spent=seconds_spent,
                                       presentation_order=presentation_order or None)
                return
            except Exception as exc:  # storage errors and driver errors alike: retry, then report
                if _is_input_error(exc):
                    raise StoreError(str(exc)) from exc
                last = exc
                time.sleep(wait_s * (attempt + 1))
        raise StoreError(f"the rating could not be written after {attempts} attempts ({last}); it is still on "
                         "screen: press Submit again, or tell the administrator the database is failing")

    def _view(self, task: Any) -> TaskView:
        return self._view_of(task.sample, task.presentation_order, dict(task.ratings))

    def _view_of(self, sample: Any, order: int, ratings: dict[str, Any]) -> TaskView:
        refs = [self._image(sha, f"reference {i + 1} of sample #{sample.id}") for i, sha in enumerate(sample.references)]
        out = self._image(sample.output, f"output of sample #{sample.id}")
        scores = {c: (ratings[c].score if c in ratings else None) for c in CRITERIA}
        status = next((r.status for r in ratings.values()), None)
        return TaskView(sample.id, refs, out, sample.prompt, order, scores, status)

    def _image(self, sha: str, name: str) -> Image.Image:
        data = _guard(lambda: self.store.images.read(sha))
        return load_image(data, name=name, max_pixels=self._settings.max_image_pixels)

    # --- browse, open, export ----------------------------------------------------------------------------

    def filters(self) -> dict[str, list[str]]:
        st = self.store
        datasets = [d.name for d in _guard(st.samples.datasets)]
        subjects = sorted({s.name for d in datasets for s in _guard(lambda d=d: st.samples.subjects(d))})
        return {"dataset": datasets, "method": _guard(st.samples.methods), "subject": subjects}

    def browse(self, *, dataset: str | None = None, method: str | None = None, subject: str | None = None,
               limit: int = 500) -> tuple[list[str], list[list[Any]]]:
        """(headers, rows): id, dataset, subject, method, prompt, every metric's latest value, mean CP/PF rating
        and how many raters; filtered by exact dataset / method / subject (None = any)."""
        rows = _guard(lambda: self.store.views.browse(dataset or None, method=method or None,
                                                      subject=subject or None, limit=limit))
        metric_names = sorted({m for r in rows for m in r.metrics})
        headers = ["id", "dataset", "subject", "method", "prompt", *metric_names,
                   "human CP (mean)", "human PF (mean)", "raters"]
        table = []
        for r in rows:
            s = r.sample
            table.append([s.id, s.dataset, s.subject, s.method or "", s.prompt or "(ratings only: no images)",
                          *[_round(r.metrics.get(m)) for m in metric_names],
                          _round(r.means.get("cp")), _round(r.means.get("pf")),
                          max(r.counts.values()) if r.counts else 0])
        return headers, table

    def open_sample(self, sample_id: int) -> StoredSample:
        st = self.store
        sample = _guard(lambda: st.samples.get(int(sample_id)))
        if sample.output is None:
            raise InputError(f"sample #{sample.id} ({sample.external_key}) is a ratings-only sample: it was imported "
                             "without images, so there is nothing to show or score. Import its images (the same "
                             "benchmark folder with samples/) to attach them.")
        refs = [self._image(sha, f"reference {i + 1} of sample #{sample.id}") for i, sha in enumerate(sample.references)]
        out = self._image(sample.output, f"output of sample #{sample.id}")
        current = _guard(lambda: st.masks.current(sample.id))
        ref_masks: list[np.ndarray | None] = []
        sources: dict[str, str] = {}
        back = {v: k for k, v in MASK_SOURCE_TO_STORE.items()}
        for i in range(len(refs)):
            rec = current.get(("reference", i))
            ref_masks.append(None if rec is None else self._mask(rec.sha256))
            if rec is not None:
                sources[f"ref{i}"] = back.get(rec.source, "imported")
        rec = current.get(("output", 0))
        out_mask = None if rec is None else self._mask(rec.sha256)
        if rec is not None:
            sources["out"] = back.get(rec.source, "imported")
        return StoredSample(sample.id, refs, out, sample.prompt, sample.subject, ref_masks, out_mask, sources)

    def latest_values(self, sample_id: int) -> dict[str, Any]:
        """metric -> latest stored record (value, reason, provenance) computed with the current masks."""
        return _guard(lambda: self.store.metrics.latest(int(sample_id)))

    def _mask(self, sha: str) -> np.ndarray:
        return load_mask_file(_guard(lambda: self.store.images.read(sha)), name=f"stored mask {sha[:12]}")

    def export(self, fmt: str, *, dataset: str | None = None, folder: Path | None = None) -> Path:
        """Write the export (`csv` or `jsonl`) into a fresh temporary folder (never the data dir); its path."""
        if fmt not in EXPORT_FORMATS:
            raise InputError(f"export format must be one of {EXPORT_FORMATS}, got {fmt!r}")
        target = Path(folder or tempfile.mkdtemp(prefix="masc-export-")) / f"masc-export-{dataset or 'all'}.{fmt}"
        writer = self.store.exports.write_csv if fmt == "csv" else self.store.exports.write_jsonl
        _guard(lambda: writer(target, dataset or None))
        return target

    def ratings_of(self, rater: str) -> list[Any]:
        return _guard(lambda: self.store.ratings.current(rater=rater))


def guarded(fn: Callable[[], Any]) -> Any:
    """`fn()`, with storage errors turned into `StoreError` (a WorkbenchError the UI shows)."""
    return _guard(fn)


def _guard(fn: Callable[[], Any]) -> Any:
    from storage import StorageError

    try:
        return fn()
    except StorageError as exc:
        raise StoreError(str(exc)) from exc


def _is_input_error(exc: Exception) -> bool:
    from storage import InvalidInput, NotFound

    return isinstance(exc, (InvalidInput, NotFound))


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="PNG")
    return buf.getvalue()


def _mask_png(mask: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(((np.asarray(mask, dtype=np.float32) >= 0.5) * 255).astype(np.uint8), "L").save(buf, format="PNG")
    return buf.getvalue()


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _provenance(prov: dict[str, Any]) -> dict[str, Any]:
    from .version import code_version

    allowed = ("model_id", "revision", "params", "code_version", "device", "dtype")
    out = {k: prov[k] for k in allowed if k in prov}
    out.setdefault("code_version", code_version())
    out["params"] = _jsonable(out.get("params") or {})
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def criterion_choices(criterion: str) -> Sequence[tuple[str, int]]:
    """Radio choices (label, score) of a criterion, the anchor text as label."""
    return [(text, i) for i, text in enumerate(ANCHORS[criterion][1])]
