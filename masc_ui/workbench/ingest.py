"""Writing what an importer read into storage, idempotently: importing the same layout twice adds nothing.

Images are decoded once with `masc_ui.imaging.open_image` and stored as its `InputImage.data` under its
`sha256` (the file's own bytes for PNG/JPEG/WebP, a PNG of its pixels for other formats; content-addressed, so
the same photo used by many samples is stored once; EXIF orientation is applied whenever it is read back).
Masks are read with `load_mask_file` and stored as PNG (`mask_to_png`, `source="imported"`), unless that exact
mask is already one of the image's versions. Ratings go in as external raters; a rating already stored with
the same score counts as present. External metric values (judges) go through the workbench's record use case
(`masc_ui.workbench.recorder`, one transaction), which appends one only when the latest value with the same
provenance differs.

An output that is a video (told apart by its first bytes, `masc_ui.imaging.open_media`) is decoded once with
`open_video` (within the video limits), stored as the file's bytes with its media type, and the sample's info gets
`video` (frame count, fps, size, codec: `masc_ui.workbench.recorder.video_info`); its mask file, if any, is the mask
reused on every frame (params `{"frame": 0, "propagation": "static"}`).

A `SampleEntry` without an output image becomes a *ratings-only* sample (no images; see
`storage.repo.samples.SampleRepository.add`), or resolves to the sample already stored under its key. A
complete entry whose key names a stored ratings-only sample completes that sample (same id, its ratings
and judge values kept). `ingest_all` stores a layout with several datasets (`Parsed.parts`). Pairwise judgments
(`Parsed.pairwise`) name samples already stored in the dataset by key (or `#<id>`); they go in as external raters'
judgments. Accepted answers of gold pairs (`Parsed.pair_gold`) name stored samples the same way; each is marked
through the gold pairs' repository (`storage.repo.pair_gold.PairGoldRepository.mark`) unless that pair and criterion
already accept that answer with that kind and note.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage import EXTERNAL_CODE_VERSION, ExternalPairJudgment, ExternalRating, NotFound, OutOfSpace, StorageError

from ..caching import LruCache
from ..datasets.entries import (
    ImportSummary,
    MetricEntry,
    PairGoldEntry,
    PairwiseEntry,
    Parsed,
    Problem,
    RatingEntry,
    SampleEntry,
)
from ..datasets.opens2v import VIDEO_SUFFIXES
from ..errors import InputError
from ..imaging import VideoLimits, load_mask_file, looks_like_video, open_image, open_video
from ..metrics.sample import MetricValue

if TYPE_CHECKING:
    from storage import RatingRecord, SampleRecord, Store

    from .recorder import Recorder

RATINGS_ONLY_CHUNK = 500
"""Ratings-only samples stored per transaction."""
EXTERNAL_SOURCE_PREFIX = "import:"
"""Prefix of the provenance `model_id` of imported metric values: `import:<metric>`."""


IMAGE_MEMO_SIZE = 65_536
"""Image files whose hash and size one import remembers (a reference shared by many samples is read once)."""


class _Images:
    """SHA-256 and (width, height) of each image file stored during one import, so that a reference shared
    by many samples is read, checked and stored once."""

    def __init__(self, max_pixels: int, video_limits: VideoLimits = VideoLimits()) -> None:
        self.max_pixels = max_pixels
        self.video_limits = video_limits
        self._stored: LruCache[tuple[str, tuple[int, int]]] = LruCache(IMAGE_MEMO_SIZE)

    def add_output(self, store: Store, path: Path) -> tuple[str, tuple[int, int], dict[str, Any] | None]:
        """(SHA-256, (width, height), video info or None) of an output file: an image (as `add`) or a video."""
        if not path.is_file():
            raise InputError(f"missing file: {path}")
        with path.open("rb") as fh:
            if not looks_like_video(fh.read(16)):
                return (*self.add(store, path), None)
        from .recorder import video_info

        video = open_video(path, name=f"video {path.name}", limits=self.video_limits)
        return store.images.add(video.data, media_type=video.media_type), video.size, video_info(video)

    def add(self, store: Store, path: Path) -> tuple[str, tuple[int, int]]:
        """(SHA-256 of the stored bytes, (width, height)); InputError for a missing or unreadable file."""

        def read() -> tuple[str, tuple[int, int]]:
            if not path.is_file():
                raise InputError(f"missing file: {path}")
            img = open_image(path, name=f"image {path.name}", max_pixels=self.max_pixels)
            return store.images.add(img.data, media_type=img.media_type), img.size

        return self._stored.get_or_compute(path, read)


class _LazyDataset:
    """The dataset of one import, created (with its rating mark, in one INSERT) when the first sample is about to
    be written, so that an import which stores no sample leaves no dataset behind."""

    def __init__(self, store: Store, name: str, for_rating: bool, summary: ImportSummary) -> None:
        self._store, self._name, self._for_rating, self._summary = store, name, for_rating, summary
        self._ready = False

    def __call__(self) -> None:
        if not self._ready:
            _, self._summary.created_dataset = self._store.samples.create_dataset(
                self._name, for_rating=self._for_rating
            )
            self._ready = True


def ingest(
    store: Store,
    dataset: str,
    importer: str,
    parsed: Parsed,
    *,
    max_pixels: int = 40_000_000,
    progress: Callable[[int], None] | None = None,
    video_limits: VideoLimits = VideoLimits(),
    recorder: Recorder | None = None,
    for_rating: bool = False,
) -> ImportSummary:
    """Store `parsed` into `dataset` through `store` (a `storage` store: `.images`, `.samples`, `.masks`,
    `.ratings`, `.metrics`; judge values through `recorder`, the record use case over the same store). Bad records
    are skipped and reported; returns the summary.

    The dataset is created when the first sample is written, with `for_rating` as its rating mark in the same
    INSERT (`SampleRepository.create_dataset`: among imports creating it at once, the creator's mark is kept);
    nothing is created when no sample is. `summary.created_dataset` says whether this import created it."""
    summary = ImportSummary(
        dataset=dataset, importer=importer, problems=list(parsed.problems), notes=list(parsed.notes)
    )
    pairs = parsed.pairwise or parsed.pair_gold
    if pairs and not parsed.samples and dataset not in {d.name for d in store.samples.datasets()}:
        what = "pairwise judgments" if parsed.pairwise else "gold pairs"
        raise InputError(
            f"dataset {dataset!r} is not in the database; {what} name samples by their keys "
            f"in it, so import its samples first (masc-ui import ... --dataset {dataset})"
        )
    create_dataset = _LazyDataset(store, dataset, for_rating, summary)
    images = _Images(max_pixels, video_limits)
    before = store.samples.count(dataset)
    stored_keys = {s.external_key: s for s in store.samples.list(dataset) if s.external_key is not None}
    waiting = {k for k, s in stored_keys.items() if s.ratings_only}
    ratings_only_before = set(waiting)
    ids: dict[str, int] = {}
    stored = created = 0
    complete = [e for e in parsed.samples if e.out is not None]
    fresh = [e for e in parsed.samples if e.out is None and e.key not in stored_keys]
    for entry in complete:
        sample_id, is_new = _ingest_sample(store, dataset, entry, images, summary, create_dataset)
        if sample_id is not None:
            for criterion, (low, high) in entry.gold.items():
                store.gold.mark(sample_id, criterion, low, high, created_by="import")
                summary.gold_answers += 1
            stored += 1
            created += is_new
            if entry.key is not None:
                ids[entry.key] = sample_id
            if entry.key in waiting:
                waiting.discard(entry.key)
                summary.completed_samples += 1
        if progress is not None:
            progress(1)
    for entry in parsed.samples:  # ratings-only entries whose key is stored: nothing to write
        if entry.out is None and entry.key in stored_keys:
            ids.setdefault(entry.key, stored_keys[entry.key].id)
            stored += 1
    for start in range(0, len(fresh), RATINGS_ONLY_CHUNK):
        chunk = [e for e in fresh[start : start + RATINGS_ONLY_CHUNK] if e.key not in ids]
        if any(e.key is not None for e in chunk):
            create_dataset()
        for entry, sample_id in zip(chunk, _ingest_ratings_only(store, dataset, chunk, summary)):
            if sample_id is not None:
                stored += 1
                ids[entry.key] = sample_id  # type: ignore[index]
        if progress is not None:
            progress(len(fresh[start : start + RATINGS_ONLY_CHUNK]))
    summary.ratings_only_samples = len(_ratings_only_keys(store, dataset) - ratings_only_before)
    # Complete samples count as added only when this import created them (another import running at the same
    # time may have stored the same ones); ratings-only ones by what the dataset gained.
    summary.added_samples = created + max(
        0, min(summary.ratings_only_samples, store.samples.count(dataset) - before - created)
    )
    summary.existing_samples = stored - summary.added_samples
    _ingest_ratings(store, dataset, parsed.ratings, ids, summary)
    _ingest_metrics(store, dataset, parsed.metrics, ids, summary, recorder)
    _ingest_pairwise(store, dataset, parsed.pairwise, ids, summary)
    _ingest_pair_gold(store, dataset, parsed.pair_gold, summary)
    return summary


def ingest_all(
    store: Store,
    dataset: str,
    importer: str,
    parsed: Parsed,
    *,
    max_pixels: int = 40_000_000,
    progress: Callable[[int], None] | None = None,
    video_limits: VideoLimits = VideoLimits(),
    recorder: Recorder | None = None,
    for_rating: bool = False,
) -> list[ImportSummary]:
    """`ingest` of a layout that may hold several datasets: the top-level records into `dataset` (when there
    are any, or no parts), then each part `suffix` into `<dataset>-<suffix>`; one summary per dataset. `for_rating`:
    the rating mark of each dataset it creates."""
    summaries = []
    if not parsed.parts or parsed.samples or parsed.ratings or parsed.metrics:
        summaries.append(
            ingest(
                store,
                dataset,
                importer,
                parsed,
                max_pixels=max_pixels,
                progress=progress,
                video_limits=video_limits,
                recorder=recorder,
                for_rating=for_rating,
            )
        )
    else:
        parent = ImportSummary(
            dataset=f"{dataset}-*", importer=importer, problems=list(parsed.problems), notes=list(parsed.notes)
        )
        if parent.problems or parent.notes:
            summaries.append(parent)
    for suffix, part in parsed.parts.items():
        summaries.append(
            ingest(
                store,
                f"{dataset}-{suffix}",
                importer,
                part,
                max_pixels=max_pixels,
                progress=progress,
                video_limits=video_limits,
                recorder=recorder,
                for_rating=for_rating,
            )
        )
    return summaries


def _ingest_sample(
    store: Store,
    dataset: str,
    entry: SampleEntry,
    images: _Images,
    summary: ImportSummary,
    create_dataset: Callable[[], None],
) -> tuple[int | None, bool]:
    """(sample id or None when skipped, whether this import created the sample) of a complete entry (one with its
    output). `create_dataset` is called once its files have been read, before the sample is written."""
    out = entry.out
    assert out is not None, "ratings-only entries go through _ingest_ratings_only"
    try:
        refs = [images.add(store, p) for p in entry.refs]
        out_sha, out_size, video = images.add_output(store, out)
        masks = _read_masks(entry, refs, (out_sha, out_size), summary)
        info = {**entry.info, "video": video} if video is not None else entry.info
        create_dataset()
        record, created = store.samples.put(
            dataset,
            references=[sha for sha, _ in refs],
            output=out_sha,
            prompt=entry.prompt,
            subject=entry.subject,
            category=entry.category,
            method=entry.method,
            seed=entry.seed,
            external_key=entry.key,
            info=info or None,
        )
        added = _store_masks(store, record.id, masks, video_output=video is not None)
        summary.added_masks += added
        summary.existing_masks += len(masks) - added
    except InputError as exc:
        text = str(exc)
        what = "video, image or mask" if out.suffix.lower() in VIDEO_SUFFIXES else "image or mask"
        reason = text if text.startswith("missing file") else f"unreadable {what}: {text}"
        summary.problems.append(Problem(entry.where, reason))
        return None, False
    except OutOfSpace:
        raise  # a full disk stops the import: no later row fits either
    except StorageError as exc:
        summary.problems.append(Problem(entry.where, f"refused by the database: {exc}"))
        return None, False
    return record.id, created


def _ratings_only_keys(store: Store, dataset: str) -> set[str]:
    return {s.external_key for s in store.samples.list(dataset) if s.ratings_only and s.external_key is not None}


def _ingest_ratings_only(
    store: Store, dataset: str, entries: list[SampleEntry], summary: ImportSummary
) -> list[int | None]:
    """Store ratings-only samples (no images) in one transaction; when the database refuses the batch, one
    by one, so that only the bad entries are skipped (with the reason). Returns each entry's id or None."""
    fields: list[dict[str, Any]] = [
        dict(
            prompt=e.prompt,
            subject=e.subject,
            category=e.category,
            method=e.method,
            seed=e.seed,
            external_key=e.key,
            info=e.info or None,
        )
        for e in entries
    ]
    for entry in entries:
        if entry.key is None:
            summary.problems.append(
                Problem(entry.where, "no output image and no key: a ratings-only sample needs a key")
            )
    usable = [(e, f) for e, f in zip(entries, fields) if e.key is not None]
    ids: dict[int, int | None] = {}
    try:
        records = store.samples.add_many(dataset, [f for _, f in usable]) if usable else []
        ids = {id(e): r.id for (e, _), r in zip(usable, records)}
    except StorageError:
        for entry, item in usable:
            try:
                ids[id(entry)] = store.samples.add(dataset, **item).id
            except StorageError as exc:
                summary.problems.append(Problem(entry.where, f"refused by the database: {exc}"))
    return [ids.get(id(e)) for e in entries]


def _read_masks(
    entry: SampleEntry,
    refs: list[tuple[str, tuple[int, int]]],
    out: tuple[str, tuple[int, int]],
    summary: ImportSummary,
) -> list[tuple[str, int, bytes]]:
    """(role, position, PNG bytes) of the entry's mask files; warns when a mask's size differs from its image's."""
    wanted = [("reference", i, p, refs[i][1]) for i, p in enumerate(entry.ref_masks) if p is not None]
    if entry.out_mask is not None:
        wanted.append(("output", 0, entry.out_mask, out[1]))
    from ..segmentation.masks import mask_to_png

    masks = []
    for role, position, path, size in wanted:
        mask = load_mask_file(path, name=f"mask {path.name}")
        if (mask.shape[1], mask.shape[0]) != size:
            summary.warnings.append(
                f"{entry.where}: mask {path.name} is {mask.shape[1]}x{mask.shape[0]} but its "
                f"image is {size[0]}x{size[1]}; the metrics resample it to the patch grid"
            )
        masks.append((role, position, mask_to_png(mask)))
    return masks


def _store_masks(
    store: Store, sample_id: int, masks: list[tuple[str, int, bytes]], *, video_output: bool = False
) -> int:
    """Each mask once per image: checked and added in one transaction (`MaskRepository.add_if_new`), so two
    imports of the same layout at once do not add it twice. A video output's mask was drawn on frame 0 and is
    reused on every frame. Returns how many were added."""
    added = 0
    for role, position, png in masks:
        params = {"frame": 0, "propagation": "static"} if video_output and role == "output" else None
        _, new = store.masks.add_if_new(
            sample_id, role, position, png, source="imported", created_by="import", params=params
        )
        added += new
    return added


def _resolve(store: Store, dataset: str, keys: Iterable[str], ids: dict[str, int]) -> dict[str, int]:
    """key -> sample id for every key known in this import or already stored."""
    found = dict(ids)
    for key in keys:
        if key not in found:
            record = store.samples.get_by_key(dataset, key)
            if record is not None:
                found[key] = record.id
    return found


def _ingest_ratings(
    store: Store, dataset: str, ratings: list[RatingEntry], ids: dict[str, int], summary: ImportSummary
) -> None:
    if not ratings:
        return
    known = _resolve(store, dataset, {r.key for r in ratings}, ids)
    by_rater: dict[str, list[RatingEntry]] = {}
    for r in ratings:
        if r.key not in known:
            summary.problems.append(
                Problem(r.where, f"unknown key: no sample {r.key!r} in dataset {dataset!r} (import its images first)")
            )
            continue
        by_rater.setdefault(r.rater, []).append(r)
    for rater, items in by_rater.items():
        current = {(x.sample_id, x.criterion): x.score for x in _current_ratings(store, rater, dataset)}
        new = [r for r in items if current.get((known[r.key], r.criterion)) != r.score]
        summary.existing_ratings += len(items) - len(new)
        if new:
            store.ratings.import_external(rater, [ExternalRating(known[r.key], r.criterion, r.score) for r in new])
            summary.added_ratings += len(new)


def _current_ratings(store: Store, rater: str, dataset: str) -> list[RatingRecord]:
    try:
        return store.ratings.current(rater=rater, dataset=dataset)
    except NotFound:
        return []


def _ingest_metrics(
    store: Store,
    dataset: str,
    metrics: list[MetricEntry],
    ids: dict[str, int],
    summary: ImportSummary,
    recorder: Recorder | None,
) -> None:
    from .database import Database
    from .recorder import Recorder, ScoredSample

    if not metrics:
        return
    known = _resolve(store, dataset, {m.key for m in metrics}, ids)
    by_sample: dict[int, list[MetricValue]] = {}
    for m in metrics:
        if m.key not in known:
            summary.problems.append(
                Problem(m.where, f"unknown key: no sample {m.key!r} in dataset {dataset!r} (import its images first)")
            )
            continue
        provenance = {
            "model_id": m.model_id or EXTERNAL_SOURCE_PREFIX + m.metric,
            "code_version": EXTERNAL_CODE_VERSION,
            "params": {**m.params, **_scale_params(m)},
        }
        by_sample.setdefault(known[m.key], []).append(
            MetricValue(m.metric, m.value, extras={"file": m.source}, provenance=provenance)
        )
    items = [ScoredSample(sid, values) for sid, values in by_sample.items()]
    recorder = recorder if recorder is not None else Recorder(Database.of(store))
    added = sum(r.new_values for r in recorder.record(items, user="import"))
    summary.added_metrics += added
    summary.existing_metrics += sum(len(v) for v in by_sample.values()) - added


def _ingest_pairwise(
    store: Store, dataset: str, entries: list[PairwiseEntry], ids: dict[str, int], summary: ImportSummary
) -> None:
    """Store pairwise judgments as external raters' (`storage.repo.pairwise.PairwiseRepository.import_external`:
    the same answer again writes nothing). Rows naming an unknown key, or a rater who logs into this app (their
    own judgments must not be overwritten by a file), are skipped and reported."""
    if not entries:
        return
    keys = {name: s.id for name, s in _sample_names(store, dataset).items()}
    keys.update(ids)
    app_raters = {r.username for r in store.ratings.raters() if not r.is_external}
    by_rater: dict[str, list[ExternalPairJudgment]] = {}
    for e in entries:
        missing = [k for k in (e.left, e.right) if k not in keys]
        if missing:
            summary.problems.append(
                Problem(
                    e.where, f"unknown key: no sample {missing[0]!r} in dataset {dataset!r} (import its samples first)"
                )
            )
            continue
        if e.rater in app_raters:
            summary.problems.append(
                Problem(
                    e.where,
                    f"rater of this app: {e.rater!r} logs in and judges here; "
                    f"name the imported rater differently (e.g. 'import:{e.rater}')",
                )
            )
            continue
        by_rater.setdefault(e.rater, []).append(
            ExternalPairJudgment(
                keys[e.left],
                keys[e.right],
                e.criterion,
                e.winner,
                both_bad=e.both_bad,
                judged_at=e.judged_at,
                seconds_spent=e.seconds,
            )
        )
    for rater, items in by_rater.items():
        written = store.pairwise.import_external(rater, items)
        summary.added_judgments += written
        summary.existing_judgments += len(items) - written


def _sample_names(store: Store, dataset: str) -> dict[str, SampleRecord]:
    """The samples of `dataset` by every name a file may give them: `#<id>`, and their external key."""
    samples = store.samples.list(dataset)
    names = {f"#{s.id}": s for s in samples}
    names.update({s.external_key: s for s in samples if s.external_key is not None})
    return names


def _ingest_pair_gold(store: Store, dataset: str, entries: list[PairGoldEntry], summary: ImportSummary) -> None:
    """Mark gold pairs (`storage.repo.pair_gold.PairGoldRepository.mark`). An answer the pair already accepts, with
    the same kind and note (a row without a note keeps the stored one), writes nothing. Rows naming an unknown
    sample, a sample without an output image, or the same sample twice are skipped and reported."""
    if not entries:
        return
    names = _sample_names(store, dataset)
    stored = {(g.sample_a_id, g.sample_b_id, g.criterion): g for g in store.pair_gold.answers(dataset)}
    for e in entries:
        missing = [name for name in (e.left, e.right) if name not in names]
        if missing:
            summary.problems.append(
                Problem(e.where, f"unknown key: no sample {missing[0]!r} in dataset {dataset!r} (import it first)")
            )
            continue
        left, right = names[e.left], names[e.right]
        if left.id == right.id:
            summary.problems.append(Problem(e.where, f"same sample: {e.left!r} and {e.right!r} are sample #{left.id}"))
            continue
        no_output = next((name for name, s in ((e.left, left), (e.right, right)) if s.output is None), None)
        if no_output is not None:
            summary.problems.append(
                Problem(e.where, f"ratings-only sample: {no_output!r} has no output image, raters cannot be shown it")
            )
            continue
        a, b = sorted((left.id, right.id))
        accepted = (
            e.accepted if (left.id, right.id) == (a, b) or e.accepted == "tie" else {"a": "b", "b": "a"}[e.accepted]
        )
        before = stored.get((a, b, e.criterion))
        note = e.note if e.note is not None or before is None else before.note
        if before is not None and (before.accepted, before.kind, before.note) == (accepted, e.kind, note):
            summary.existing_pair_gold += 1
            continue
        try:
            store.pair_gold.mark(
                left.id, right.id, e.criterion, e.accepted, kind=e.kind, note=note, created_by="import"
            )
        except OutOfSpace:
            raise
        except StorageError as exc:
            summary.problems.append(Problem(e.where, f"refused by the database: {exc}"))
            continue
        summary.added_pair_gold += 1


def _scale_params(entry: MetricEntry) -> dict[str, Any]:
    """Provenance params of an imported metric: its rating scale, when it has one (read by agreement)."""
    if entry.rating_range is None:
        return {"scale": "continuous"}
    return {"scale": "rating", "range": [float(entry.rating_range[0]), float(entry.rating_range[1])]}
