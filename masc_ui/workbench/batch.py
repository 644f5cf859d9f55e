"""Dataset-scale scoring: every sample of a dataset that lacks a value for the current provenance, batched,
resumable, sharded over processes.

    masc-ui batch --dataset NAME --metrics cp,pf,clip_i [--masks stored|text|none]
    accelerate launch --multi_gpu --num_processes 4 -m masc_ui batch --dataset NAME --metrics all --db postgresql+psycopg://...

(`--multi_gpu` is Accelerate's torchrun launcher; with `--device cpu` the processes run on CPU with gloo.
Accelerate's own `--cpu` flag starts several processes only through MPI (`mpirun`); without it, one.)

What counts as done: a (sample, metric) whose stored values include one with the scorer's provenance key
(model, revision, parameters, dtype; `storage.provenance_key`) computed with exactly the current masks the
metric uses (CP: the reference masks, PF: the output mask; `store.metrics.scored_samples`). A new mask
version makes only the metrics that use it stale. Values of a chunk are written in one transaction after it is scored, so an
interrupted run (Ctrl-C, kill, power cut) loses at most the chunk in flight and a rerun scores only what is
left: nothing stored is computed again.

Masks (`masks`):
- `stored`: the samples' current masks. A metric that needs a mask the sample lacks is not computed for that
  sample (counted under "lacking inputs" in the summary, and scored by a later run once the mask exists).
- `text`: stored masks where present; each missing one is made by text-prompted segmentation of the subject's
  name (`masc_ui.segmentation.build_text_segmenter`). With `store_masks`, those masks are saved first as mask
  versions (source `text`) and the values point at them; without, the values' provenance params get
  `text_masks=<segmentation model>` so they never pass for values computed with stored masks. The app's rule for
  doubtful masks holds here too: a mask SAM 3 flags doubtful (empty, or below `text_seg_min_fraction` of the image;
  a video's masks when any frame's is) is never used, never a current mask; the metrics that need it are counted
  under "lacking inputs" and the summary counts the doubtful masks. With `store_masks`, a doubtful image mask is
  kept as a proposal (a mask version that is not current, `storage` revision 0007; once per content), which the
  Score tab offers when the sample is opened from Browse; a video's doubtful masks are not kept.
- `none`: no masks at all; only metrics that need none are computed.

The PF stripper and text segmentation name the subject by `info["prompt_subject"]` when the importer stored
one (DreamBooth: the class, "dog"; its identifier token "sks" is in neither the stored prompt nor these words),
else by the subject's name.

Failures: a sample whose images cannot be read, or whose scoring raises, gets a NULL value with reason
`error: ...` (extras `{"error": <exception type>}`) for each metric, and the run goes on; such values count as
done unless `retry_failed`. When only its masks cannot be made (`masks="text"` with the segmenter unavailable or
failing), the metrics that need no mask (CLIP-I, DINO-I, PickScore, ...) are computed and stored as usual, and each
metric that needs a missing mask gets a NULL value with reason `error: masks could not be made: ...` (extras
`{"error": "masks"}`); the summary counts those samples under "failed" and names the reason once. A segmenter that
could not be loaded is not asked again in the same run.

Ratings-only samples (imported ratings or judge values without images) are left out before sharding and
counted in the summary ("N ratings-only samples have no images to score"); they are not failures.

Videos: a sample whose output is a video is scored in the same run by the same call (`score_metrics`: every image
metric per sampled frame, the frames of a video through each backbone together; the video metrics). Its values'
provenance holds the sampled frame indices, which depend on its frame count T (read from the sample's info,
`info["video"]["frame_count"]`, written when it was recorded or imported; decoded when absent), so what counts as done
is decided per provenance of each video. Masks: a stored output mask is reused on every frame (`static`); with
`masks="text"` a missing output mask is made per sampled frame from the subject's name and never stored (one mask per
slot), the values say so (`out_mask_frames`). A video metric of an image output is not computed (counted under
"lacking inputs").

Sharding: process `i` of `n` takes the samples whose id % n == i (stable under resumption, whichever process
starts first). Run under `accelerate launch`, each process uses its own device (`cuda:<local rank>`).
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..caching import LruCache
from ..errors import InputError, ModelUnavailableError, WorkbenchError
from ..imaging import InputImage, InputVideo, VideoLimits, open_image, open_media
from ..metrics.registry import get_scorer, get_spec, parse_metric_names, resolve_metric_names, score_metrics
from ..metrics.sample import MetricValue, Sample
from ..metrics.video.frame_masks import FrameMasks, static_rule, text_rule
from ..metrics.video.frames import image_metric_frames, value_provenance
from ..models.loaded_models import ModelRegistry
from ..settings import Settings
from .database import Database
from .masks import frame_masks_by_name, segmenter_id
from .recorder import Recorder, ScoredSample, Slot, UsedMask, masks_used

if TYPE_CHECKING:
    from storage import MaskRecord, SampleRecord

    from ..segmentation import TextSegmentation, TextSegmenter

MASK_MODES = ("stored", "text", "none")
ERROR_PREFIX = "error: "
MASK_ERROR = "masks could not be made: "
"""Reason of a value whose metric needed a mask that text-prompted segmentation failed to make (after ERROR_PREFIX)."""
IMAGE_CACHE_SIZE = 256
"""Decoded images kept by a run (references recur across the samples of a subject)."""
TEXT_MASK_CACHE_SIZE = 1024
"""Text-prompted segmentations kept by a run (a reference shared by many samples is segmented once)."""
BATCH_USER = "batch"
"""The author of the masks batch runs store."""


@runtime_checkable
class ProvenanceScorer(Protocol):
    """A scorer that says, before scoring, the provenance its values will have (every built-in scorer)."""

    def provenance(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class BatchOptions:
    dataset: str
    """Dataset to score."""
    metrics: tuple[str, ...]
    """Metric names (see `masc_ui.metrics.registry.parse_metric_names`)."""
    masks: str = "stored"
    """`stored`, `text` or `none` (module docstring)."""
    store_masks: bool = False
    """With `masks="text"`: save the text-prompted masks as mask versions."""
    batch_size: int = 16
    """Samples scored (and written) together."""
    limit: int | None = None
    """Score at most this many samples in this run (then stop; a rerun continues)."""
    retry_failed: bool = False
    """Score again the samples whose stored value for this provenance is an `error: ...`."""
    process_index: int = 0
    num_processes: int = 1
    mask_shifts: tuple[int, ...] = ()
    """Pixel shifts of the mask-sensitivity check stored with each mask-dependent value (extras
    `mask_sensitivity`: the values with every mask eroded and dilated by each shift, and the spread); empty: none."""

    def __post_init__(self) -> None:
        parse_metric_names(list(self.metrics), media=None)  # an unknown name fails before anything is loaded
        if self.mask_shifts:
            from .mask_sensitivity import check_shifts

            object.__setattr__(self, "mask_shifts", check_shifts(self.mask_shifts))
        if self.masks not in MASK_MODES:
            raise InputError(f"masks must be one of {', '.join(MASK_MODES)}, got {self.masks!r}")
        if self.store_masks and self.masks != "text":
            raise InputError("store_masks only applies to masks='text' (the masks made from the subject's name)")
        if self.batch_size < 1:
            raise InputError(f"batch size must be >= 1, got {self.batch_size}")
        if self.limit is not None and self.limit < 0:
            raise InputError(f"limit must be >= 0, got {self.limit}")
        if not 0 <= self.process_index < self.num_processes:
            raise InputError(f"process index {self.process_index} is not within 0..{self.num_processes - 1}")


@dataclass
class BatchSummary:
    """What one process did."""

    dataset: str
    metrics: list[str]
    process_index: int = 0
    num_processes: int = 1
    samples_in_dataset: int = 0
    """Samples with images (the ones there is something to score)."""
    ratings_only: int = 0
    """Ratings-only samples of the dataset (imported ratings, no images): skipped, not failures."""
    samples_in_shard: int = 0
    already_done: dict[str, int] = field(default_factory=dict)
    """metric -> samples of the shard that had a value before this run."""
    scored_samples: int = 0
    """Samples that went through the scorers in this run."""
    values_written: int = 0
    nan_values: Counter[str] = field(default_factory=Counter)
    """reason -> count of values stored as NULL (not computable) in this run."""
    lacking_inputs: Counter[str] = field(default_factory=Counter)
    """"<metric> needs <what is missing>" -> samples not scored for it (nothing stored; a later run scores
    them once the inputs exist)."""
    failures: list[tuple[int, str]] = field(default_factory=list)
    """(sample id, reason) of samples whose scoring failed."""
    masks_made: int = 0
    """Text-prompted masks made (and stored, with `store_masks`)."""
    doubtful_masks: int = 0
    """Of `masks_made`, those that came out doubtful (empty, or smaller than the settings' minimum fraction): as in
    the app, a doubtful mask is not applied (never a current mask, never scored with)."""
    store_masks: bool = False
    """The run's `BatchOptions.store_masks`: doubtful masks are kept as proposals."""
    proposals_stored: int = 0
    """Of `doubtful_masks`, those kept as proposals in this run (`store_masks`; a proposal already stored with the
    same bytes is not counted again)."""
    mask_failures: Counter[str] = field(default_factory=Counter)
    """reason -> samples whose text-prompted masks could not be made (their mask-free metrics were still scored)."""
    sensitivity_values: int = 0
    """Values stored with their mask-sensitivity check (`BatchOptions.mask_shifts`)."""
    stopped_early: bool = False
    """True when `limit` ended the run before the shard was done."""
    seconds: float = 0.0

    @property
    def samples_per_second(self) -> float:
        return self.scored_samples / self.seconds if self.seconds > 0 else 0.0

    def lines(self) -> list[str]:
        shard = f" (process {self.process_index + 1}/{self.num_processes})" if self.num_processes > 1 else ""
        out = [
            f"dataset {self.dataset!r}{shard}: {self.samples_in_shard} of {self.samples_in_dataset} samples; "
            f"metrics {', '.join(self.metrics)}",
            "already scored before this run: " + ", ".join(f"{m} {n}" for m, n in self.already_done.items()),
            f"scored now: {self.scored_samples} samples, {self.values_written} values written in "
            f"{self.seconds:.1f} s ({self.samples_per_second:.2f} samples/s)",
        ]
        if self.ratings_only and self.process_index == 0:
            out.append(
                f"{self.ratings_only} ratings-only samples have no images to score (skipped; import their "
                f"images to score them)"
            )
        if self.masks_made:
            out.append(f"text-prompted masks made: {self.masks_made}")
        if self.sensitivity_values:
            out.append(f"values stored with their mask-sensitivity check: {self.sensitivity_values}")
        if self.doubtful_masks:
            kept = (
                f"{self.proposals_stored} newly kept as proposals to check (Browse, open the sample: the Score "
                "tab offers it)"
                if self.store_masks
                else "not stored"
            )
            out.append(
                f"doubtful text-prompted masks (empty or small), not applied: {self.doubtful_masks}, {kept} "
                "(the metrics that need them are listed under inputs missing; draw those masks, or lower "
                "MASC_TEXT_SEG_THRESHOLD / MASC_TEXT_SEG_MIN_FRACTION)"
            )
        if self.nan_values:
            out.append(
                "not computable (stored as n/a): " + "; ".join(f"{r} ({n})" for r, n in self.nan_values.most_common())
            )
        if self.lacking_inputs:
            out.append(
                "not scored, inputs missing: " + "; ".join(f"{r} ({n})" for r, n in self.lacking_inputs.most_common())
            )
        if self.mask_failures:
            out.append(
                "masks could not be made (the metrics that need them stored as errors, the others computed): "
                + "; ".join(f"{r} ({n})" for r, n in self.mask_failures.most_common())
            )
        if self.failures:
            out.append(f"failed: {len(self.failures)} sample(s) (stored with their reason; rerun with --retry-failed)")
            out += [f"  sample #{sid}: {reason}" for sid, reason in self.failures[:20]]
        if self.stopped_early:
            out.append("stopped at --limit; run again to continue")
        return out


class _Images:
    """Decoded stored images by SHA-256 (`InputImage`s: the stored bytes' hash is their identity, so every
    encoding cache below recognises them). Output videos are decoded when asked for and not kept (one per sample)."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self._database = database
        self._max_pixels = settings.max_image_pixels
        self._limits = VideoLimits.from_settings(settings)
        self._cache: LruCache[InputImage] = LruCache(IMAGE_CACHE_SIZE)

    def get(self, sha: str, name: str) -> InputImage:
        return self._cache.get_or_compute(
            sha,
            lambda: open_image(self._database.images.read(sha), name=name, max_pixels=self._max_pixels),
        )

    def output(self, record: SampleRecord, name: str) -> InputImage | InputVideo:
        """The output of a stored sample: an image (kept), or a video (by its first bytes)."""
        sha = _output_of(record)
        if _video_info(record) is None:
            data = self._database.images.read(sha)
            found = open_media(data, name=name, max_pixels=self._max_pixels, limits=self._limits)
            if isinstance(found, InputImage):
                self._cache.put(sha, found)
            return found
        return open_media(
            self._database.images.read(sha),
            name=name,
            max_pixels=self._max_pixels,
            limits=self._limits,
        )


class MaskFailure(Exception):
    """Text-prompted masks could not be made for an image (the segmenter is unavailable or failed); the message is
    the reason."""


class _TextMasks:
    """Text-prompted masks by (image SHA-256, words): a reference shared by many samples is segmented once."""

    def __init__(self, segmenter: TextSegmenter, settings: Settings) -> None:
        self._segmenter = segmenter
        self._settings = settings
        self._cache: LruCache[TextSegmentation] = LruCache(TEXT_MASK_CACHE_SIZE)
        self._unavailable: str | None = None

    @property
    def model_id(self) -> str:
        return segmenter_id(self._segmenter)

    @property
    def threshold(self) -> float:
        return self._settings.text_seg_threshold

    def get(self, image: InputImage, words: str) -> TextSegmentation:
        """The segmenter's `TextSegmentation` of `words` in `image`. Raises `MaskFailure` (the reason) when the
        segmenter cannot be loaded (then at once for every later call of the run) or fails on this image."""
        if self._unavailable is not None:
            raise MaskFailure(self._unavailable)
        try:
            return self._cache.get_or_compute(
                (image.sha256, words),
                lambda: self._segmenter.segment(
                    image, words, self._settings.text_seg_threshold, self._settings.text_seg_min_fraction
                ),
            )
        except ModelUnavailableError as exc:
            self._unavailable = f"{type(exc).__name__}: {exc}"
            raise MaskFailure(self._unavailable) from exc
        except Exception as exc:  # noqa: BLE001 - a failing segmentation costs the masks, not the sample
            raise MaskFailure(f"{type(exc).__name__}: {exc}") from exc


@dataclass
class _Plan:
    """Per metric: provenance (storable) and which shard samples still need it."""

    provenance: dict[str, dict[str, Any]]
    todo: dict[str, set[int]]
    per_sample: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    """metric -> sample id -> provenance, for samples whose provenance is their own (videos: sampled frames)."""

    def provenance_of(self, metric: str, sample_id: int) -> dict[str, Any]:
        return self.per_sample.get(metric, {}).get(sample_id, self.provenance[metric])


@dataclass(frozen=True)
class ProcessContext:
    """Where this process stands among the processes `accelerate launch` started (1 of 1 otherwise)."""

    index: int
    count: int
    settings: Settings
    """The settings with this process's device when the user left it on `auto` (`cuda:<local rank>`)."""
    state: Any = None

    @property
    def is_main(self) -> bool:
        return self.index == 0


def process_context(settings: Settings) -> ProcessContext:
    """This process's shard position from Hugging Face Accelerate (`PartialState`); a plain process is 0 of 1."""
    from accelerate import PartialState

    state = PartialState(cpu=settings.device == "cpu")
    if settings.device == "auto" and state.device.type != "cpu":
        settings = settings.replace(device=str(state.device))
    return ProcessContext(state.process_index, state.num_processes, settings, state)


def gather_summaries(context: ProcessContext, summary: BatchSummary) -> list[BatchSummary]:
    """Every process's summary on the main process (after all of them finished); [summary] when alone."""
    if context.count == 1:
        return [summary]
    from accelerate.utils import gather_object

    context.state.wait_for_everyone()
    summaries = list(gather_object([summary]))
    # Leave the process group together: a process that exits while its peer is still inside a gloo
    # collective makes that peer abort (SIGABRT), which failed the rerun of an already finished dataset.
    context.state.wait_for_everyone()
    context.state.destroy_process_group()
    return summaries


class BatchScoring:
    """Dataset-scale scoring (the module docstring) over one `Database`, recording through `recorder`, with the
    models of `settings` (profile resolved) in the shared registry."""

    def __init__(self, database: Database, recorder: Recorder, settings: Settings, models: ModelRegistry) -> None:
        self._database = database
        self._recorder = recorder
        self._settings = settings
        self._models = models

    def check(self, options: BatchOptions, *, user: str | None = None) -> None:
        """InputError for an unknown metric or dataset (what `run` checks first), before any model is loaded."""
        parse_metric_names(list(options.metrics), media=None)
        self._database.accounts.require_admin(user, "batch scoring")
        self._database.require_dataset(options.dataset)

    def run(
        self,
        options: BatchOptions,
        *,
        user: str | None = None,
        segmenter: TextSegmenter | None = None,
        on_start: Callable[[int], None] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> BatchSummary:
        """Score `options.dataset` (this process's shard) and record the values through the record use case.

        `user`: the acting user (an admin; None: a local process); the masks it stores are authored `batch`.
        `segmenter`: a `TextSegmenter` for
        `masks="text"` (None = the settings' SAM 3 when needed). `on_start(n)`: called once with the number of
        samples this run will score; `progress(k)` after each chunk with the number of samples it held. Raises
        `InputError` for an unknown dataset or metric.
        """
        started = time.perf_counter()
        database, recorder, settings, models = self._database, self._recorder, self._settings, self._models
        self.check(options, user=user)
        listed = database.samples.list(options.dataset)
        samples = [s for s in listed if not s.ratings_only]
        shard = [s for s in samples if s.id % options.num_processes == options.process_index]
        frame_counts = _frame_counts(database, shard, settings)
        names = resolve_metric_names(
            list(options.metrics),
            [],
            settings,
            video=any(_video_info(s) is not None for s in samples) or bool(frame_counts),
        )
        summary = BatchSummary(
            options.dataset,
            names,
            options.process_index,
            options.num_processes,
            samples_in_dataset=len(samples),
            ratings_only=len(listed) - len(samples),
            store_masks=options.store_masks,
        )
        summary.samples_in_shard = len(shard)
        text_masks = None
        if options.masks == "text":
            if segmenter is None:
                from ..segmentation import build_text_segmenter

                segmenter = build_text_segmenter(settings, models)  # loads its model on first use only
            text_masks = _TextMasks(segmenter, settings)
        plan = _plan(database, recorder, settings, models, names, shard, options, summary, text_masks, frame_counts)
        todo = [s for s in shard if any(s.id in plan.todo[m] for m in names)]
        todo.sort(key=lambda s: (s.references, s.id))  # neighbours share references: cache hits
        if options.limit is not None and len(todo) > options.limit:
            todo, summary.stopped_early = todo[: options.limit], True
        if on_start is not None:
            on_start(len(todo))
        images = _Images(database, settings)
        for begin in range(0, len(todo), options.batch_size):
            chunk = todo[begin : begin + options.batch_size]
            _score_chunk(database, recorder, settings, models, text_masks, images, chunk, names, plan, options, summary)
            if progress is not None:
                progress(len(chunk))
        summary.seconds = time.perf_counter() - started
        return summary


def _plan(
    database: Database,
    recorder: Recorder,
    settings: Settings,
    models: ModelRegistry,
    names: list[str],
    shard: list[SampleRecord],
    options: BatchOptions,
    summary: BatchSummary,
    text_masks: _TextMasks | None,
    frame_counts: Mapping[int, int],
) -> _Plan:
    """Per metric: the provenance and the shard's samples still to score (`Recorder.done`). Samples that lack a
    mask the metric needs (and will not get one: masks `stored`/`none`) are left out and counted in the
    summary, as are image samples for a video metric. A video's provenance is its own (its sampled frames), so done
    is asked once per distinct provenance."""
    provenance, todo, per_sample = {}, {}, {}
    ids = [s.id for s in shard]
    current = database.masks.current_for(ids) if ids and options.masks != "none" else {}
    for name in names:
        scorer = get_scorer(name, settings, models)
        assert isinstance(scorer, ProvenanceScorer)
        prov = scorer.provenance()
        if text_masks is not None and not options.store_masks and get_spec(name).needs_masks != "none":
            prov["params"]["text_masks"] = text_masks.model_id
        if options.mask_shifts and get_spec(name).needs_masks != "none":
            prov["params"]["mask_sensitivity_px"] = list(options.mask_shifts)
        provenance[name] = prov
        per_sample[name] = {
            r.id: value_provenance(
                scorer, settings, prov, frame_counts[r.id], _out_mask_rule(current.get(r.id, {}), text_masks)
            )
            for r in shard
            if r.id in frame_counts
        }
        missing = {r.id: _missing_masks(name, r, current.get(r.id, {})) for r in shard}
        # A value counts as done only if computed with exactly the masks the metric would use now.
        exact = (
            {sid: _mask_ids_used(name, current.get(sid, {})) for sid in ids if not missing[sid]}
            if get_spec(name).needs_masks != "none"
            else None
        )
        done: set[int] = set()
        for key_prov, group in _groups(ids, prov, per_sample[name]):
            found = recorder.done(name, key_prov, group, masks=exact)
            if options.retry_failed and found:
                found -= recorder.failed(name, key_prov, sorted(found), ERROR_PREFIX)
            done |= found
        todo[name] = set(ids) - done
        summary.already_done[name] = len(ids) - len(todo[name])
        if get_spec(name).media == "video":
            for sid in ids:
                if sid in todo[name] and sid not in frame_counts:
                    todo[name].discard(sid)
                    summary.lacking_inputs[f"{name} needs a video output"] += 1
        if options.masks != "text":
            for sid in ids:
                if sid in todo[name] and missing[sid]:
                    todo[name].discard(sid)
                    summary.lacking_inputs[f"{name} needs {', '.join(missing[sid])}"] += 1
    return _Plan(provenance, todo, per_sample)


def _groups(
    ids: list[int], common: dict[str, Any], own: Mapping[int, dict[str, Any]]
) -> list[tuple[dict[str, Any], list[int]]]:
    """The sample ids by the provenance their values would have (`own` where a sample has its own, else `common`)."""
    import json

    groups: dict[str, tuple[dict[str, Any], list[int]]] = {}
    for sid in ids:
        prov = own.get(sid, common)
        groups.setdefault(json.dumps(prov, sort_keys=True, default=str), (prov, []))[1].append(sid)
    return list(groups.values())


def _output_of(record: SampleRecord) -> str:
    """The output's SHA-256 of a stored sample with images (ratings-only samples are left out before scoring)."""
    if record.output is None:
        raise InputError(f"sample #{record.id} is a ratings-only sample: it has no output to score")
    return record.output


def _video_info(record: SampleRecord) -> Mapping[str, Any] | None:
    info = (record.info or {}).get("video")
    return info if isinstance(info, Mapping) and isinstance(info.get("frame_count"), int) else None


def _frame_counts(database: Database, shard: list[SampleRecord], settings: Settings) -> dict[int, int]:
    """Sample id -> frame count T of the shard's video outputs: from the sample's info, else (a video stored before
    its info was kept) decoded once, told apart by the stored media type."""
    counts = {}
    unknown = []
    for record in shard:
        info = _video_info(record)
        if info is not None:
            counts[record.id] = int(info["frame_count"])
        else:
            unknown.append(record)
    if unknown:
        images = database.images
        kinds = {r.id: images.media_type(_output_of(r)) for r in unknown}
        limits = VideoLimits.from_settings(settings)
        for record in unknown:
            if kinds[record.id].startswith("video/"):
                try:
                    data = images.read(_output_of(record))
                    found = open_media(data, name=f"sample #{record.id} output", limits=limits)
                except (WorkbenchError, OSError, ValueError):
                    continue  # scoring it fails with the reason, recorded as a failure
                if isinstance(found, InputVideo):
                    counts[record.id] = found.frame_count
    return counts


def _out_mask_rule(current: Mapping[Slot, MaskRecord], text_masks: _TextMasks | None) -> dict[str, Any] | None:
    """How a video's frames get their output mask in this run: the stored one reused on every frame, else (masks
    `text`) made per frame from the subject's name, else none."""
    if ("output", 0) in current:
        return static_rule()
    if text_masks is not None:
        return text_rule(text_masks.model_id, text_masks.threshold)
    return None


def _missing_masks(metric: str, record: SampleRecord, current: Mapping[Slot, MaskRecord]) -> list[str]:
    """The mask slots `metric` needs that `record` has no stored mask for (`ref_masks[i]`, `out_mask`)."""
    needs = get_spec(metric).needs
    missing = []
    if needs.ref_masks:
        missing += [f"ref_masks[{i}]" for i in range(len(record.references)) if ("reference", i) not in current]
    if needs.out_mask and ("output", 0) not in current:
        missing.append("out_mask")
    return missing


def _mask_ids_used(metric: str, current: Mapping[Slot, MaskRecord]) -> tuple[int, ...]:
    """Ids of the stored mask versions a value of `metric` would use (`masks_used`, the record rule)."""
    return tuple(sorted(current[slot].id for slot in masks_used(metric, current)))


def _subject_words(record: SampleRecord) -> str:
    info = record.info or {}
    words = info.get("prompt_subject")
    return words if isinstance(words, str) and words.strip() else record.subject


@dataclass
class _Built:
    """A stored sample made ready for the scorers, and the masks it carries (slot -> mask)."""

    record: SampleRecord
    sample: Sample
    masks: dict[Slot, UsedMask]
    mask_errors: dict[str, str] = field(default_factory=dict)
    """Needed-input name (`ref_masks[i]`, `out_mask`) -> why its text-prompted mask could not be made."""
    doubts: dict[str, str] = field(default_factory=dict)
    """Needed-input name -> why its text-prompted mask is doubtful (made, but neither used nor stored)."""


def _score_chunk(
    database: Database,
    recorder: Recorder,
    settings: Settings,
    models: ModelRegistry,
    text_masks: _TextMasks | None,
    images: _Images,
    chunk: list[SampleRecord],
    names: list[str],
    plan: _Plan,
    options: BatchOptions,
    summary: BatchSummary,
) -> None:
    masks = database.masks.current_for([r.id for r in chunk]) if options.masks != "none" else {}
    built: list[_Built] = []
    items: list[ScoredSample] = []
    for record in chunk:
        wanted = [m for m in names if record.id in plan.todo[m]]
        try:
            built.append(
                _build_sample(
                    database, record, masks.get(record.id, {}), images, text_masks, options, summary, settings
                )
            )
        except (WorkbenchError, OSError, ValueError) as exc:
            stored = {slot: UsedMask.stored(m.sha256) for slot, m in masks.get(record.id, {}).items()}
            items.append(_failure(record, wanted, plan, exc, summary, stored))
    if built:
        try:
            items += _score_built(settings, models, built, names, plan, summary, options.mask_shifts)
        except Exception:  # noqa: BLE001 - isolate the failing sample, keep the others
            for one in built:
                try:
                    items += _score_built(settings, models, [one], names, plan, summary, options.mask_shifts)
                except Exception as exc:  # noqa: BLE001
                    items.append(
                        _failure(
                            one.record,
                            [m for m in names if one.record.id in plan.todo[m]],
                            plan,
                            exc,
                            summary,
                            one.masks,
                        )
                    )
    items = [item for item in items if item.values]
    if items:
        summary.values_written += sum(r.new_values for r in recorder.record(items, user=BATCH_USER))
    summary.scored_samples += len(chunk)


def _text_mask_params(words: str, text_masks: _TextMasks, seg: Any) -> dict[str, Any]:
    """How a text-prompted mask was made, stored with its version."""
    return {
        "text": words,
        "model_id": text_masks.model_id,
        "threshold": text_masks.threshold,
        "n_instances": int(seg.n_instances),
    }


def _build_sample(
    database: Database,
    record: SampleRecord,
    current: Mapping[Slot, MaskRecord],
    images: _Images,
    text_masks: _TextMasks | None,
    options: BatchOptions,
    summary: BatchSummary,
    settings: Settings,
) -> _Built:
    """The scorer's `Sample` of a stored sample and its masks: the stored ones, and (`masks="text"`) one made
    from the subject's name for each image without (recorded as a new mask version with `store_masks`)."""
    from ..segmentation.masks import mask_from_png, mask_to_png

    words = _subject_words(record)
    shas = [("reference", i, sha) for i, sha in enumerate(record.references)] + [("output", 0, record.output)]
    pictures: dict[Slot, Any] = {
        ("reference", i): images.get(sha, f"sample #{record.id} reference {i}")
        for i, sha in enumerate(record.references)
    }
    pictures["output", 0] = images.output(record, f"sample #{record.id} output 0")
    video = pictures["output", 0] if isinstance(pictures["output", 0], InputVideo) else None
    arrays: dict[Slot, Any] = {}
    used: dict[Slot, UsedMask] = {}
    mask_errors: dict[str, str] = {}
    doubts: dict[str, str] = {}
    for role, pos, _ in shas:
        stored = current.get((role, pos))
        if stored is not None:
            arrays[role, pos] = mask_from_png(database.images.read(stored.sha256))
            used[role, pos] = UsedMask.stored(stored.sha256)
            if video is not None and role == "output":
                frame = (stored.params or {}).get("frame", 0)
                arrays[role, pos] = FrameMasks.static(arrays[role, pos], frame if isinstance(frame, int) else 0)
        elif video is not None and role == "output" and text_masks is not None:
            try:
                made = frame_masks_by_name(
                    text_masks.get,
                    video,
                    words,
                    image_metric_frames(settings).indices(video.frame_count),
                    model_id=text_masks.model_id,
                    threshold=text_masks.threshold,
                )
            except MaskFailure as exc:
                mask_errors[_input_name((role, pos))] = str(exc)
                continue
            summary.masks_made += len(made.masks)
            doubtful_frames = made.params.get("doubtful_frames") or []
            if doubtful_frames:
                doubts[_input_name((role, pos))] = f"doubtful on frame(s) {', '.join(map(str, doubtful_frames))}"
                summary.doubtful_masks += 1
                continue
            arrays[role, pos] = made
        elif text_masks is not None:
            try:
                seg = text_masks.get(pictures[role, pos], words)
            except MaskFailure as exc:
                mask_errors[_input_name((role, pos))] = str(exc)
                continue
            summary.masks_made += 1
            if seg.doubtful:
                doubts[_input_name((role, pos))] = seg.reason or "doubtful"
                summary.doubtful_masks += 1
                if options.store_masks:
                    params = {**_text_mask_params(words, text_masks, seg), "doubtful": seg.reason or "doubtful"}
                    _, added = database.masks.add_if_new(
                        record.id, role, pos, mask_to_png(seg.mask), source="text", params=params, proposal=True
                    )
                    summary.proposals_stored += added
                continue
            arrays[role, pos] = seg.mask
            if options.store_masks:
                used[role, pos] = UsedMask.new(seg.mask, "text", _text_mask_params(words, text_masks, seg))
    n_refs = len(record.references)
    labels = (record.info or {}).get("ref_labels")
    sample = Sample(
        refs=tuple(pictures["reference", i] for i in range(n_refs)),
        out=pictures["output", 0],
        prompt=record.prompt,
        subject=words,
        ref_masks=tuple(arrays.get(("reference", i)) for i in range(n_refs)),
        out_mask=arrays.get(("output", 0)),
        ref_labels=tuple(labels) if isinstance(labels, list) and len(labels) == n_refs else (),
    )
    return _Built(record, sample, used, mask_errors, doubts)


def _input_name(slot: Slot) -> str:
    """A mask slot as `MetricNeeds.missing` names it: `ref_masks[i]` or `out_mask`."""
    return "out_mask" if slot[0] == "output" else f"ref_masks[{slot[1]}]"


def _score_built(
    settings: Settings,
    models: ModelRegistry,
    built: list[_Built],
    names: list[str],
    plan: _Plan,
    summary: BatchSummary,
    mask_shifts: tuple[int, ...] = (),
) -> list[ScoredSample]:
    """Score the chunk's samples for every metric some of them still need; per sample, the values of the
    metrics that were to do and had their inputs (the others are counted as lacking inputs). With `mask_shifts`,
    each mask-dependent value carries its mask-sensitivity check (`_with_sensitivity`)."""
    samples = [b.sample for b in built]
    needed = [m for m in names if any(b.record.id in plan.todo[m] for b in built)]
    lacking = {m: {i: get_spec(m).needs.missing(s) for i, s in enumerate(samples)} for m in needed}
    scorable = [m for m in needed if not all(lacking[m].values())]
    values: dict[str, list[MetricValue]] = (
        score_metrics(samples, scorable, settings, models, missing="nan") if scorable else {}
    )
    if mask_shifts:
        masked = [m for m in scorable if get_spec(m).needs_masks != "none"]
        values = _with_sensitivity(settings, models, samples, values, masked, mask_shifts)
        summary.sensitivity_values += sum(
            "mask_sensitivity" in (v.extras or {})
            for m in masked
            for i, v in enumerate(values[m])
            if built[i].record.id in plan.todo[m]
        )
    items = []
    for i, b in enumerate(built):
        mine = []
        for m in needed:
            if b.record.id not in plan.todo[m]:
                continue
            failed = [b.mask_errors[what] for what in lacking[m][i] if what in b.mask_errors]
            if failed:
                error = f"{ERROR_PREFIX}{MASK_ERROR}{failed[0]}"[:2000]
                extras = {"error": "masks", "missing": lacking[m][i]}
                mine.append(MetricValue(m, float("nan"), error, extras, plan.provenance_of(m, b.record.id)))
                continue
            if lacking[m][i]:
                doubtful = [what for what in lacking[m][i] if what in b.doubts]
                note = f" (text mask doubtful, not applied: {', '.join(doubtful)})" if doubtful else ""
                summary.lacking_inputs[f"{m} needs {', '.join(lacking[m][i])}{note}"] += 1
                continue
            v = values[m][i]
            reason = (v.reason or "not computable") if v.is_nan else None
            if reason is not None:
                summary.nan_values[f"{m}: {reason}"] += 1
            mine.append(MetricValue(m, v.value, reason, v.extras, plan.provenance_of(m, b.record.id)))
        items.append(ScoredSample(b.record.id, mine, b.masks))
        if b.mask_errors:
            reason = next(iter(b.mask_errors.values()))
            summary.mask_failures[reason] += 1
            summary.failures.append((b.record.id, f"{ERROR_PREFIX}{MASK_ERROR}{reason}"[:2000]))
    return items


def _with_sensitivity(
    settings: Settings,
    models: ModelRegistry,
    samples: list[Sample],
    values: dict[str, list[MetricValue]],
    masked: list[str],
    shifts: tuple[int, ...],
) -> dict[str, list[MetricValue]]:
    """`values` where each finite value of a metric in `masked` carries extras `mask_sensitivity`
    (`mask_sensitivity.spread_record`: the metric on the sample with every mask eroded and dilated by each of
    `shifts` pixels, and the spread). The variants of the whole chunk are scored together, by the same scorers."""
    from .mask_sensitivity import shifted_variants, spread_record

    if not masked:
        return values
    variants = [(i, label, v) for i, s in enumerate(samples) for label, v in shifted_variants(s, shifts).items()]
    rescored = score_metrics([v for _, _, v in variants], masked, settings, models, missing="nan")
    out = dict(values)
    for m in masked:
        per_sample: dict[int, dict[str, float | None]] = {}
        for k, (i, label, _) in enumerate(variants):
            got = rescored[m][k]
            per_sample.setdefault(i, {})[label] = None if got.is_nan else float(got.value)
        fresh = []
        for i, v in enumerate(values[m]):
            if v.is_nan:
                fresh.append(v)
                continue
            record = {"shifts_px": list(shifts), **spread_record(float(v.value), per_sample.get(i, {}))}
            fresh.append(dataclasses.replace(v, extras={**(v.extras or {}), "mask_sensitivity": record}))
        out[m] = fresh
    return out


def _failure(
    record: SampleRecord,
    wanted: Sequence[str],
    plan: _Plan,
    exc: BaseException,
    summary: BatchSummary,
    masks: Mapping[Slot, UsedMask],
) -> ScoredSample:
    """NULL values with the error as reason, for each metric the sample still needed (with the masks it
    would have used, so that the failure counts as done until `retry_failed` or the masks change)."""
    reason = f"{ERROR_PREFIX}{type(exc).__name__}: {exc}"[:2000]
    summary.failures.append((record.id, reason))
    return ScoredSample(
        record.id,
        [
            MetricValue(m, float("nan"), reason, {"error": type(exc).__name__}, plan.provenance_of(m, record.id))
            for m in wanted
        ],
        dict(masks),
    )
