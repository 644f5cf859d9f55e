"""Stored samples: browse them with their latest values and mean ratings, open one for the Score tab (images as
the stored `InputImage`s, a video output as its `InputVideo`, current masks at their image's size, every field),
its stored scores, a poster picture per sample (a video's first frame), which datasets are marked for rating, and
the exports (samples as CSV / JSON lines / Parquet / an image folder for the Hugging Face `datasets` library, see
`dataset_export`; or the pairwise judgments as CSV / JSON lines)."""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ..errors import InputError
from ..imaging import InputImage, InputVideo, VideoLimits, load_mask_file, open_image, open_media, poster_frame
from ..metrics.video.frame_masks import FrameMasks
from ..settings import Settings
from .database import Database
from .recorder import MASK_SOURCE_TO_STORE, target_of
from .scoring import ScoreReport, stored_rows

if TYPE_CHECKING:
    from storage import MetricValueRecord, SampleRecord

EXPORT_FORMATS = ("csv", "jsonl", "parquet", "imagefolder")
PAIRWISE_EXPORT_FORMATS = ("csv", "jsonl")
FOLDER_FORMATS = ("imagefolder",)
"""Formats written as a folder (downloaded from the app as a zip of it)."""
BROWSE_PAGE_SIZE = 100
"""Rows of one Browse page (the table pages through every stored sample)."""
SAMPLE_ID_MAX = 2**63 - 1
"""Largest id a database row can have."""


@dataclass
class StoredSample:
    """A stored sample opened for the Score tab: its images as stored (the `InputImage` of each blob, same
    `sha256`), its fields, its current masks as bool arrays at their image's size and their sources (Score tab
    names: `drawn`, `sam`, ...)."""

    sample_id: int
    refs: list[InputImage]
    out: InputImage | InputVideo
    """The output image, or video."""
    prompt: str
    subject: str
    ref_masks: list[np.ndarray | None]
    out_mask: np.ndarray | FrameMasks | None
    """For a video: its stored mask as `FrameMasks.static` (drawn on the frame its params name)."""
    mask_sources: dict[str, str] = field(default_factory=dict)
    ref_labels: list[str | None] = field(default_factory=list)
    """Class labels of the references when stored (imported OpenS2V samples), else empty."""
    dataset: str = ""
    method: str | None = None
    warnings: list[str] = field(default_factory=list)
    """What the user must be told, e.g. a stored mask of another size than its image, resized to it."""
    proposals: dict[str, tuple[np.ndarray, str]] = field(default_factory=dict)
    """Score tab target (`ref0`, ..., `out`) -> (a stored proposal still offered, bool (H, W) at its image's size;
    why it is only proposed): the doubtful text-prompted masks `masc-ui batch --store-masks` kept. Images only."""


@dataclass(frozen=True)
class BrowsePage:
    """One page of the Browse table: its headers and rows, and where it lies in the whole selection."""

    headers: list[str]
    rows: list[list[Any]]
    total: int
    """Stored samples matching the filters (all of them, not only this page's)."""
    offset: int
    """Position of the page's first row in the sorted selection (0-based)."""
    page: int
    """This page's number, from 1."""
    pages: int
    """How many pages the selection fills (at least 1)."""

    def summary(self) -> str:
        """`rows 101-200 of 1,539 sample(s) · page 2 of 16` (`0 of 0 sample(s)` when nothing matches)."""
        if not self.rows:
            return f"0 of {self.total:,} sample(s)"
        first, last = self.offset + 1, self.offset + len(self.rows)
        return (
            f"{len(self.rows):,} of {self.total:,} sample(s): rows {first:,}–{last:,}, page {self.page} of {self.pages}"
        )


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
        self._database.accounts.require_admin(user, "browsing stored samples")

        samples = self._database.samples
        datasets = [d.name for d in samples.datasets()]
        subjects = sorted({s.name for d in datasets for s in samples.subjects(d)})
        return {"dataset": datasets, "method": samples.methods(), "subject": subjects}

    def browse(
        self,
        *,
        user: str | None,
        dataset: str | None = None,
        method: str | None = None,
        subject: str | None = None,
        sort: str = "id",
        descending: bool = False,
        page: int | float = 1,
        page_size: int = BROWSE_PAGE_SIZE,
    ) -> BrowsePage:
        """One page of the Browse table over every stored sample matching the filters (exact dataset / method /
        subject; None = any), sorted in the database by `sort` (a header of the table: `id`, `dataset`, ...,
        a metric's display name, `human CP (mean)`, `raters`; ties by id; empty cells last). Columns: id,
        dataset, subject, method, every metric stored for the selection (headed by the registry's display name,
        e.g. `CLIP-I`; imported judge metrics by their stored name), mean CP/PF rating, how many raters, and the
        prompt last (long: the numbers come first on a narrow screen). `page` counts from 1; a page past the
        end shows the last one. InputError for an unknown sort column. Admins only."""
        from ..metrics.registry import list_metrics

        self._database.accounts.require_admin(user, "browsing stored samples")
        shown = {spec.name: spec.display_name for spec in list_metrics()}
        order = list(shown)
        filters = {"method": method or None, "subject": subject or None}
        views = self._database.views
        selection = views.browse_page(
            dataset or None, method=filters["method"], subject=filters["subject"], limit=0
        )  # its metrics and size, no rows
        metric_names = sorted(selection.metrics, key=lambda m: (m not in shown, order.index(m) if m in shown else 0, m))
        keys = {
            **{c: c for c in ("id", "dataset", "subject", "method")},
            **{shown.get(m, m): f"metric:{m}" for m in metric_names},
            "human CP (mean)": "mean:cp",
            "human PF (mean)": "mean:pf",
            "raters": "raters",
            "prompt": "prompt",
        }
        if sort not in keys:
            raise InputError(f"cannot sort by {sort!r}: choose one of the table's columns ({', '.join(keys)})")
        if isinstance(page, float) and page.is_integer():
            page = int(page)
        if isinstance(page, bool) or not isinstance(page, int) or page < 1:
            raise InputError(f"page must be a whole number from 1 up, got {page!r}")
        size = max(1, int(page_size))
        pages = max(1, -(-selection.total // size))
        page = min(page, pages)
        found = views.browse_page(
            dataset or None,
            **filters,
            sort=keys[sort],
            descending=bool(descending),
            limit=size,
            offset=(page - 1) * size,
        )
        table = []
        for r in found.rows:
            s = r.sample
            table.append(
                [
                    s.id,
                    s.dataset,
                    s.subject,
                    s.method or "",
                    *[_round(r.metrics.get(m)) for m in metric_names],
                    _round(r.means.get("cp")),
                    _round(r.means.get("pf")),
                    max(r.counts.values()) if r.counts else 0,
                    s.prompt or "(ratings only: no images)",
                ]
            )
        return BrowsePage(list(keys), table, found.total, found.offset, page, pages)

    def datasets(self, *, user: str | None) -> list[DatasetInfo]:
        """Every stored dataset with its for-rating mark and sample count, by name. Admins only."""
        self._database.accounts.require_admin(user, "listing datasets")

        samples = self._database.samples
        return [DatasetInfo(d.name, d.for_rating, samples.count(d.name)) for d in samples.datasets()]

    def set_for_rating(self, dataset: str, for_rating: bool, *, user: str | None) -> str:
        """Mark (or unmark) `dataset` for rating: raters get its samples as tasks. Returns what changed, as a
        sentence. InputError for an unknown dataset. Admins only."""
        self._database.accounts.require_admin(user, "marking datasets for rating")
        name = (dataset or "").strip()
        if not name:
            raise InputError("choose a dataset first (the Dataset filter above the table)")
        self._database.require_dataset(name)
        before = {d.name: d.for_rating for d in self.datasets(user=user)}[name]
        self._database.samples.set_for_rating(name, bool(for_rating))
        if before == bool(for_rating):
            return f"dataset '{name}' was already {'marked' if for_rating else 'not marked'} for rating"
        return (
            f"dataset '{name}' is now marked for rating: raters get its samples as tasks"
            if for_rating
            else f"dataset '{name}' is no longer marked for rating: raters get no new tasks from it"
        )

    def open(self, sample_id: int, *, user: str | None) -> StoredSample:
        """A stored sample with its fields and current masks (InputError for an unknown id or a ratings-only
        sample: no images). A stored mask of another size than its image is resized to the image (nearest
        neighbour) and a warning says so. Admins only."""
        self._database.accounts.require_admin(user, "opening stored samples")
        sample = self._stored(sample_id)
        if sample.output is None:
            raise InputError(
                f"sample #{sample.id} ({sample.external_key}) is a ratings-only sample: it was imported "
                "without images, so there is nothing to show or score. Import its images (the same "
                "benchmark folder with samples/) to attach them."
            )
        refs = [
            self._image(sha, f"reference {i + 1} of sample #{sample.id}") for i, sha in enumerate(sample.references)
        ]
        out = self._output(sample.output, f"output of sample #{sample.id}")
        current = self._database.masks.current(sample.id)
        masks: dict[str, np.ndarray | FrameMasks] = {}
        sources: dict[str, str] = {}
        warnings: list[str] = []
        back = {v: k for k, v in MASK_SOURCE_TO_STORE.items()}
        images = {**{f"ref{i}": r for i, r in enumerate(refs)}, "out": out}
        for (role, position), rec in current.items():
            target = target_of((role, position))
            if target not in images:
                continue
            masks[target], note = fit_mask(self._mask(rec.sha256), images[target], _label(target))
            if note:
                warnings.append(note)
            if target == "out" and isinstance(out, InputVideo):
                frame = (rec.params or {}).get("frame", 0)
                masks[target] = FrameMasks.static(masks[target], frame if isinstance(frame, int) else 0)
            sources[target] = back.get(rec.source, "imported")
        proposals: dict[str, tuple[np.ndarray, str]] = {}
        for (role, position), rec in self._database.masks.proposals_for([sample.id]).get(sample.id, {}).items():
            target = target_of((role, position))
            image = images.get(target)
            if image is None or isinstance(image, InputVideo):
                continue
            proposed, _ = fit_mask(self._mask(rec.sha256), image, _label(target))
            proposals[target] = (proposed, proposal_reason(rec.params))
        labels = (sample.info or {}).get("ref_labels")
        return StoredSample(
            sample.id,
            refs,
            out,
            sample.prompt or "",
            sample.subject,
            [_still(masks.get(f"ref{i}")) for i in range(len(refs))],
            masks.get("out"),
            sources,
            ref_labels=list(labels) if isinstance(labels, list) and len(labels) == len(refs) else [],
            dataset=sample.dataset,
            method=sample.method,
            warnings=warnings,
            proposals=proposals,
        )

    def _stored(self, sample_id: object) -> SampleRecord:
        """The stored sample record of a typed id (InputError for a bad or unknown id)."""
        return self._database.sample(
            sample_id_of(sample_id),
            missing="is not in the database: type the id of a row of the table, or click the row",
        )

    def poster(self, sample_id: int, *, user: str | None) -> InputImage | None:
        """The picture that stands for a stored sample in Browse: its output image, or its video's first frame;
        None for a ratings-only sample (no images). Admins only."""
        self._database.accounts.require_admin(user, "browsing stored samples")
        sample = self._stored(sample_id)
        if sample.output is None:
            return None
        out = self._output(sample.output, f"output of sample #{sample.id}")
        return poster_frame(out) if isinstance(out, InputVideo) else out

    def stored_report(self, sample_id: int, *, user: str | None) -> ScoreReport:
        """The latest stored value of every registered metric of a stored sample (computed with its current
        masks), as a score table (`scoring.stored_rows`: metrics never stored show `n/a (not stored for this sample:
        press Run to compute it)`, reasons in the Score tab's words)."""
        self._database.accounts.require_admin(user, "seeing stored scores")
        latest = self.latest_values(sample_id, user=user)
        sample = self._stored(sample_id)
        video = isinstance((sample.info or {}).get("video"), dict)
        return ScoreReport(stored_rows(latest, video=video), {}, cached=True)

    def latest_values(self, sample_id: int, *, user: str | None) -> dict[str, MetricValueRecord]:
        """metric -> latest stored record (value, reason, provenance) computed with the current masks."""
        self._database.accounts.require_admin(user, "seeing stored scores")
        return self._database.metrics.latest(sample_id_of(sample_id))

    def export(
        self,
        fmt: str,
        *,
        user: str | None,
        dataset: str | None = None,
        target: Path | TextIO | None = None,
        folder: Path | None = None,
    ) -> tuple[Path | TextIO, int]:
        """Write the export of `dataset` (None = all; one row per sample, latest values, every rater's ratings):
        `csv` or `jsonl` to `target` (a file path, or an open text stream such as stdout), `parquet` to a file path,
        `imagefolder` to a folder path (absent or empty; `dataset_export`). With `target` None, a file for download
        in `folder` (None: a fresh temporary folder; never the data dir) named `export_file_name(dataset, fmt)` (the
        dataset name is data, never part of a path), and for `imagefolder` that folder zipped (`.zip`). Admins only.
        Returns (where it went, rows written); InputError for an unknown dataset or format."""
        from .dataset_export import write_imagefolder, write_parquet, zip_folder

        self._database.accounts.require_admin(user, "exporting")
        if fmt not in EXPORT_FORMATS:
            raise InputError(f"export format must be one of {', '.join(EXPORT_FORMATS)}")
        if dataset is not None:
            self._database.require_dataset(dataset)
        archive = None
        if target is None:
            folder = Path(folder or tempfile.mkdtemp(prefix="masc-export-"))
            target = folder / export_file_name(dataset, fmt)
            archive = folder / f"{target.name}.zip" if fmt in FOLDER_FORMATS else None
        elif fmt in ("parquet", *FOLDER_FORMATS) and not isinstance(target, (str, Path)):
            raise InputError(
                f"the {fmt} export is written to a {'folder' if fmt in FOLDER_FORMATS else 'file'}, "
                "not to standard output: give a path"
            )
        try:
            if fmt == "csv":
                n = self._database.exports.write_csv(target, dataset)
            elif fmt == "jsonl":
                n = self._database.exports.write_jsonl(target, dataset)
            else:
                assert isinstance(target, (str, Path))  # a stream was refused above
                path = Path(target)
                if fmt == "parquet":
                    n = self._database.run(partial(write_parquet, target=path, dataset=dataset))
                else:
                    n = self._database.run(partial(write_imagefolder, folder=path, dataset=dataset))
                if archive is not None:
                    return zip_folder(path, archive), n
        except OSError as exc:
            raise InputError(f"cannot write {target if target is not sys.stdout else 'stdout'}: {exc}") from None
        return target, n

    def export_pairwise(
        self,
        fmt: str,
        *,
        user: str | None,
        dataset: str | None = None,
        target: Path | TextIO | None = None,
        folder: Path | None = None,
        history: bool = False,
        time_on_task: bool = True,
    ) -> tuple[Path | TextIO, int]:
        """Write the pairwise judgments export (`csv` or `jsonl`: one row per current judgment, see
        `storage.repo.pair_exports`) like `export` writes the samples' (default file
        `masc-pairwise-<dataset or all>.<fmt>`): with `history` every superseded revision of a judgment is a row
        too (columns `current`, `replaced_at` added), with `time_on_task` False the `seconds` column is left out.
        What `masc-ui export --pairwise` and Browse's pairwise export write. Admins only. Returns (where it went,
        rows written)."""
        self._database.accounts.require_admin(user, "exporting")
        if fmt not in PAIRWISE_EXPORT_FORMATS:
            raise InputError(f"the pairwise export format must be one of {', '.join(PAIRWISE_EXPORT_FORMATS)}")
        if dataset is not None:
            self._database.require_dataset(dataset)
        if target is None:
            folder = Path(folder or tempfile.mkdtemp(prefix="masc-export-"))
            target = folder / export_file_name(dataset, fmt, prefix="masc-pairwise")
        try:
            pairwise = self._database.pairwise
            write = pairwise.write_jsonl if fmt == "jsonl" else pairwise.write_csv
            n = write(target, dataset, history=history, time_on_task=time_on_task)
        except OSError as exc:
            raise InputError(f"cannot write {target if target is not sys.stdout else 'stdout'}: {exc}") from None
        return target, n

    def _image(self, sha: str, name: str) -> InputImage:
        data = self._database.images.read(sha)
        return open_image(data, name=name, max_pixels=self._settings.max_image_pixels)

    def _output(self, sha: str, name: str) -> InputImage | InputVideo:
        data = self._database.images.read(sha)
        return open_media(
            data,
            name=name,
            max_pixels=self._settings.max_image_pixels,
            limits=VideoLimits.from_settings(self._settings),
        )

    def _mask(self, sha: str) -> np.ndarray:
        return load_mask_file(self._database.images.read(sha), name=f"stored mask {sha[:12]}")


def fit_mask(mask: np.ndarray, image: InputImage | InputVideo, label: str) -> tuple[np.ndarray, str | None]:
    """`mask` at the size of `image` (an `InputImage`, or an `InputVideo`'s frames): unchanged when it has that
    size, else resized (nearest neighbour) with a warning naming both sizes (the resized mask is what a later Save
    stores, as a new mask version)."""
    from ..segmentation.masks import resize_mask

    h, w = np.shape(mask)
    if (w, h) == tuple(image.size):
        return mask, None
    note = (
        f"the stored mask of {label} is {w}x{h}, its image {image.size[0]}x{image.size[1]}: it was stretched to "
        "the image; check it before scoring (Save stores the stretched mask as a new version)"
    )
    return resize_mask(mask, image.size), note


def proposal_reason(params: Mapping[str, Any] | None) -> str:
    """Why a stored proposal is only proposed, in the Score tab's words, from its version's params."""
    params = params or {}
    doubt = params.get("doubtful") or "doubtful"
    words = params.get("text")
    return f"kept by the batch from the subject's name{f' ({words!r})' if words else ''}: {doubt}"


def _still(mask: np.ndarray | FrameMasks | None) -> np.ndarray | None:
    """A reference's mask (references are images: never frame masks)."""
    return mask if isinstance(mask, np.ndarray) else None


def _label(target: str) -> str:
    return "the output" if target == "out" else f"reference {int(target[3:]) + 1}"


def export_file_name(dataset: str | None, fmt: str, *, prefix: str = "masc-export") -> str:
    """`<prefix>-<dataset>.<fmt>` (no suffix for a folder format) with the dataset name reduced to letters, digits,
    `_` and `-` (at most 60), `all` for every dataset: a name the server chooses, whatever the dataset is called."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", dataset or "all").strip("-")[:60] or "dataset"
    return f"{prefix}-{slug}" if fmt in FOLDER_FORMATS else f"{prefix}-{slug}.{fmt}"


def sample_id_of(value: object) -> int:
    """A sample id from what a user typed (an int, a float with no fraction, or a text of digits such as `" 12"`)
    within 1..2**63 - 1; InputError saying to pick a sample first for an empty value."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError("pick a sample first: click a row of the Browse table, or type a sample id")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= SAMPLE_ID_MAX:
        raise InputError(
            f"sample id must be a whole number from 1 to {SAMPLE_ID_MAX:,}; type the id shown in the table"
        )
    return value


def _round(value: float | None) -> str | None:
    """A table cell: the value in significant digits (`numbers.format_value`), None (an empty cell) without one."""
    from ..analysis.numbers import format_value

    return None if value is None else format_value(value)
