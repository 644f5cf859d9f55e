"""Stored samples: browse them with their latest values and mean ratings, open one for the Score tab (images as
the stored `InputImage`s, current masks, every field), its stored scores, the export (CSV / JSON lines), and which
datasets are marked for rating."""
from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ..errors import InputError
from ..imaging import InputImage, load_mask_file, open_image
from ..settings import Settings
from .database import Database
from .records import MASK_SOURCE_TO_STORE, target_of
from .scoring import ScoreReport, stored_rows

EXPORT_FORMATS = ("csv", "jsonl")
BROWSE_LIMIT = 500
"""Most rows the Browse table shows at once."""


@dataclass
class StoredSample:
    """A stored sample opened for the Score tab: its images as stored (the `InputImage` of each blob, same
    `sha256`), its fields, its current masks as bool arrays at their image's size and their sources (Score tab
    names: `drawn`, `sam`, ...)."""

    sample_id: int
    refs: list[InputImage]
    out: InputImage
    prompt: str
    subject: str
    ref_masks: list[np.ndarray | None]
    out_mask: np.ndarray | None
    mask_sources: dict[str, str] = field(default_factory=dict)
    dataset: str = ""
    method: str | None = None
    warnings: list[str] = field(default_factory=list)
    """What the user must be told, e.g. a stored mask of another size than its image, resized to it."""


@dataclass(frozen=True)
class DatasetInfo:
    """A stored dataset as the Browse tab lists it."""

    name: str
    for_rating: bool
    """True when raters get its samples as tasks."""
    samples: int


class StoredSamples:
    """Browsing, opening and exporting stored samples over one `Database`."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self._database = database
        self._settings = settings

    def filters(self, *, user: str | None) -> dict[str, list[str]]:
        """The values each Browse filter offers: dataset, method and subject names."""
        def work(store: Any) -> dict[str, list[str]]:
            datasets = [d.name for d in store.samples.datasets()]
            subjects = sorted({s.name for d in datasets for s in store.samples.subjects(d)})
            return {"dataset": datasets, "method": store.samples.methods(), "subject": subjects}
        return self._database.run(work)

    def browse(self, *, user: str | None, dataset: str | None = None, method: str | None = None,
               subject: str | None = None, limit: int = BROWSE_LIMIT) -> tuple[list[str], list[list[Any]]]:
        """(headers, rows): id, dataset, subject, method, every metric's latest value (headed by the registry's
        display name, e.g. `CLIP-I`; imported judge metrics by their stored name), mean CP/PF rating, how many
        raters, and the prompt last (long: the numbers come first on a narrow screen); filtered by exact
        dataset / method / subject (None = any)."""
        from ..metrics.registry import list_metrics

        rows = self._database.run(lambda store: store.views.browse(dataset or None, method=method or None,
                                                                   subject=subject or None, limit=limit))
        shown = {spec.name: spec.display_name for spec in list_metrics()}
        order = list(shown)
        metric_names = sorted({m for r in rows for m in r.metrics},
                              key=lambda m: (m not in shown, order.index(m) if m in shown else 0, m))
        headers = ["id", "dataset", "subject", "method", *[shown.get(m, m) for m in metric_names],
                   "human CP (mean)", "human PF (mean)", "raters", "prompt"]
        table = []
        for r in rows:
            s = r.sample
            table.append([s.id, s.dataset, s.subject, s.method or "", *[_round(r.metrics.get(m)) for m in metric_names],
                          _round(r.means.get("cp")), _round(r.means.get("pf")),
                          max(r.counts.values()) if r.counts else 0, s.prompt or "(ratings only: no images)"])
        return headers, table

    def datasets(self, *, user: str | None) -> list[DatasetInfo]:
        """Every stored dataset with its for-rating mark and sample count, by name."""
        def work(store: Any) -> list[DatasetInfo]:
            return [DatasetInfo(d.name, d.for_rating, store.samples.count(d.name)) for d in store.samples.datasets()]
        return self._database.run(work)

    def set_for_rating(self, dataset: str, for_rating: bool, *, user: str | None) -> str:
        """Mark (or unmark) `dataset` for rating: raters get its samples as tasks. Returns what changed, as a
        sentence. InputError for an unknown dataset."""
        name = (dataset or "").strip()
        if not name:
            raise InputError("choose a dataset first (the Dataset filter above the table)")
        self._database.require_dataset(name)
        before = {d.name: d.for_rating for d in self.datasets(user=user)}[name]
        self._database.run(lambda store: store.samples.set_for_rating(name, bool(for_rating)))
        if before == bool(for_rating):
            return f"dataset '{name}' was already {'marked' if for_rating else 'not marked'} for rating"
        return (f"dataset '{name}' is now marked for rating: raters get its samples as tasks" if for_rating else
                f"dataset '{name}' is no longer marked for rating: raters get no new tasks from it")

    def open(self, sample_id: int, *, user: str | None) -> StoredSample:
        """A stored sample with its fields and current masks (InputError for an unknown id or a ratings-only
        sample: no images). A stored mask of another size than its image is resized to the image (nearest
        neighbour) and a warning says so."""
        from storage import NotFound

        if isinstance(sample_id, bool) or int(sample_id) != sample_id or int(sample_id) < 1:
            raise InputError(f"sample ids are whole numbers from 1 up; {sample_id!r} is not one: type the id of a "
                             "row of the table, or click the row")

        def get(store: Any) -> Any:
            try:
                return store.samples.get(int(sample_id))
            except NotFound:
                raise InputError(f"sample #{int(sample_id)} is not in the database: type the id of a row of the "
                                 "table, or click the row") from None
        sample = self._database.run(get)
        if sample.output is None:
            raise InputError(f"sample #{sample.id} ({sample.external_key}) is a ratings-only sample: it was imported "
                             "without images, so there is nothing to show or score. Import its images (the same "
                             "benchmark folder with samples/) to attach them.")
        refs = [self._image(sha, f"reference {i + 1} of sample #{sample.id}")
                for i, sha in enumerate(sample.references)]
        out = self._image(sample.output, f"output of sample #{sample.id}")
        current = self._database.run(lambda store: store.masks.current(sample.id))
        masks: dict[str, np.ndarray] = {}
        sources: dict[str, str] = {}
        warnings: list[str] = []
        back = {v: k for k, v in MASK_SOURCE_TO_STORE.items()}
        images = {**{f"ref{i}": r for i, r in enumerate(refs)}, "out": out}
        for (role, position), rec in current.items():
            target = target_of((role, position))
            if target not in images:
                continue
            masks[target], note = fit_mask(self._mask(rec.sha256), images[target], _label(target))
            sources[target] = back.get(rec.source, "imported")
            if note:
                warnings.append(note)
        return StoredSample(sample.id, refs, out, sample.prompt, sample.subject,
                            [masks.get(f"ref{i}") for i in range(len(refs))], masks.get("out"), sources,
                            dataset=sample.dataset, method=sample.method, warnings=warnings)

    def stored_report(self, sample_id: int, *, user: str | None) -> ScoreReport:
        """The latest stored value of every registered metric of a stored sample (computed with its current
        masks), as a score table; metrics never stored show `n/a (not computed yet: press Run)`."""
        latest = self.latest_values(sample_id, user=user)
        return ScoreReport(stored_rows(latest), {}, cached=True)

    def latest_values(self, sample_id: int, *, user: str | None) -> dict[str, Any]:
        """metric -> latest stored record (value, reason, provenance) computed with the current masks."""
        return self._database.run(lambda store: store.metrics.latest(int(sample_id)))

    def export(self, fmt: str, *, user: str | None, dataset: str | None = None,
               target: Path | TextIO | None = None, folder: Path | None = None) -> tuple[Path | TextIO, int]:
        """Write the export (`csv` or `jsonl`: one row per sample, latest values, every rater's ratings) to
        `target` (a file path, or an open text stream such as stdout), or when None to
        `masc-export-<dataset or all>.<fmt>` in `folder` (None: a fresh temporary folder; never the data dir).
        Returns (where it went, rows written); InputError for an unknown dataset."""
        if fmt not in EXPORT_FORMATS:
            raise InputError(f"export format must be one of {EXPORT_FORMATS}, got {fmt!r}")
        if dataset is not None:
            self._database.require_dataset(dataset)
        if target is None:
            folder = Path(folder or tempfile.mkdtemp(prefix="masc-export-"))
            target = folder / f"masc-export-{dataset or 'all'}.{fmt}"
        try:
            n = self._database.run(lambda store: (store.exports.write_jsonl if fmt == "jsonl"
                                                  else store.exports.write_csv)(target, dataset))
        except OSError as exc:
            raise InputError(f"cannot write {target if target is not sys.stdout else 'stdout'}: {exc}") from None
        return target, n

    def _image(self, sha: str, name: str) -> InputImage:
        data = self._database.run(lambda store: store.images.read(sha))
        return open_image(data, name=name, max_pixels=self._settings.max_image_pixels)

    def _mask(self, sha: str) -> np.ndarray:
        return load_mask_file(self._database.run(lambda store: store.images.read(sha)),
                              name=f"stored mask {sha[:12]}")


def fit_mask(mask: np.ndarray, image: InputImage, label: str) -> tuple[np.ndarray, str | None]:
    """`mask` at `image`'s size: unchanged when it has that size, else resized (nearest neighbour) with a
    warning naming both sizes (the resized mask is what a later Save stores, as a new mask version)."""
    from ..segmentation.masks import resize_mask

    h, w = np.shape(mask)
    if (w, h) == image.size:
        return mask, None
    note = (f"the stored mask of {label} is {w}x{h}, its image {image.size[0]}x{image.size[1]}: it was stretched to "
            "the image; check it before scoring (Save stores the stretched mask as a new version)")
    return resize_mask(mask, image.size), note


def _label(target: str) -> str:
    return "the output" if target == "out" else f"reference {int(target[3:]) + 1}"


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)

