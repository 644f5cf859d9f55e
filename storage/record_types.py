"""Plain, frozen records returned by the repositories (never ORM objects, so they outlive sessions).

Timestamps are timezone-aware UTC datetimes; image and mask contents are referred to by the SHA-256
(64 lowercase hex digits) of their stored bytes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .errors import InvalidInput


@dataclass(frozen=True)
class DatasetRecord:
    id: int
    name: str
    created_at: dt.datetime
    for_rating: bool = False
    """True when raters get this dataset's samples as tasks (`SampleRepository.set_for_rating`)."""


@dataclass(frozen=True)
class SubjectRecord:
    id: int
    dataset_id: int
    name: str
    category: str | None
    """E.g. `live`/`object`/`human`/`style` (DreamBench++), or None when unknown."""


@dataclass(frozen=True)
class SampleRecord:
    id: int
    dataset: str
    subject: str
    category: str | None
    """The subject's category."""
    prompt: str | None
    """Generation prompt; None only for a ratings-only sample whose prompt is unknown."""
    method: str | None
    """Generation method (model) name, e.g. `dreambooth`."""
    seed: int | None
    external_key: str | None
    """Key in the source benchmark, unique within the dataset (e.g. DreamBench++ `"<collection>-<idx>"`)."""
    references: tuple[str, ...]
    """SHA-256 of each reference image, in order (reference position 0, 1, ...); () for a ratings-only sample."""
    output: str | None
    """SHA-256 of the generated output image; None for a ratings-only sample."""
    info: Mapping[str, Any] | None
    """Free-form JSON metadata from the importer (e.g. source file paths)."""
    created_at: dt.datetime

    @property
    def ratings_only(self) -> bool:
        """True for a sample without images (imported ratings / judge values only): nothing to show a
        rater, nothing to score; `store.samples.add` with its key and images completes it."""
        return self.output is None


@dataclass(frozen=True)
class MaskRecord:
    id: int
    sample_id: int
    role: str
    """`reference` or `output`."""
    position: int
    """Reference index (0-based); always 0 for the output."""
    version: int
    """1, 2, ... per image (proposals included); the highest that is not a proposal is the current mask."""
    source: str
    """`drawn`, `sam`, `imported` or `text`."""
    created_by: str | None
    created_at: dt.datetime
    sha256: str
    """SHA-256 of the mask's PNG bytes in the blob store."""
    params: Mapping[str, Any] | None
    """How it was made, e.g. SAM clicks or the text prompt."""
    proposal: bool = False
    """A version kept for a person to check: never the current mask, never scored with (a doubtful text mask)."""


@dataclass(frozen=True)
class Provenance:
    """What produced a metric value. Fields mirror the metric engine's provenance dict."""

    model_id: str | None
    """HF id or local path of the model (or the external source, e.g. `gpt-4o`)."""
    code_version: str
    """`masc_ui.version.code_version()` of the program that computed the value (`external` for imports)."""
    revision: str | None = None
    """Model revision / commit hash, when known."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """Parameters that change the value: max patches, threshold, stripper, fill, ... (JSON-able)."""
    device: str | None = None
    dtype: str | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Provenance:
        """From the metric engine's provenance dict (keys: model_id, revision, params, code_version, device,
        dtype; unknown keys are refused so that nothing is silently dropped)."""
        if not isinstance(data, Mapping):
            raise InvalidInput(f"provenance must be a Provenance or a dict, got {type(data).__name__}")
        allowed = {"model_id", "revision", "params", "code_version", "device", "dtype"}
        unknown = set(data) - allowed
        if unknown:
            raise InvalidInput(f"unknown provenance keys {sorted(unknown)}; allowed: {sorted(allowed)}")
        if "code_version" not in data:
            raise InvalidInput("provenance needs `code_version` (masc_ui.version.code_version())")
        return cls(
            model_id=data.get("model_id"),
            code_version=data["code_version"],
            revision=data.get("revision"),
            params=dict(data.get("params") or {}),
            device=data.get("device"),
            dtype=data.get("dtype"),
        )


@dataclass(frozen=True)
class MetricValueRecord:
    id: int
    sample_id: int
    metric: str
    value: float | None
    """None when the metric is undefined for the sample (was NaN); `reason` says why."""
    reason: str | None
    extras: Mapping[str, Any] | None
    provenance: Provenance
    provenance_key: str
    """`storage.provenance_key(provenance)`: identifies model, revision, parameters and dtype."""
    mask_version_ids: tuple[int, ...]
    """Mask versions the value was computed with (sorted)."""
    computed_at: dt.datetime


@dataclass(frozen=True)
class MetricInput:
    """One metric value to record (see `MetricRepository.record_many`)."""

    sample_id: int
    metric: str
    value: float | None
    provenance: Provenance | Mapping[str, Any]
    reason: str | None = None
    extras: Mapping[str, Any] | None = None
    mask_version_ids: tuple[int, ...] = ()
    computed_at: dt.datetime | None = None


@dataclass(frozen=True)
class RaterRecord:
    id: int
    username: str
    is_external: bool
    """True for imported raters (e.g. DreamBench++ annotator group `group1`)."""
    created_at: dt.datetime


@dataclass(frozen=True)
class RatingRecord:
    id: int
    rater: str
    sample_id: int
    criterion: str
    """`cp` (concept preservation), `pf` (prompt following), or an imported benchmark's `sc` / `pq`
    (ImagenHub's semantic consistency / perceptual quality, stored as cell value x 4)."""
    score: int | None
    """0..4 when status is `rated`, else None."""
    status: str
    """`rated`, `skipped` or `flagged`."""
    seconds_spent: float | None
    presentation_order: int | None
    """1-based position of the sample in this rater's sequence of tasks."""
    note: str | None
    """The rater's note; for a `flagged` rating, the reason of the flag."""
    revision: int
    """1 for the first rating, +1 per edit."""
    created_at: dt.datetime
    updated_at: dt.datetime


@dataclass(frozen=True)
class RatingRevision:
    """One revision of a rating; `replaced_at` is None for the current one."""

    revision: int
    score: int | None
    status: str
    seconds_spent: float | None
    presentation_order: int | None
    note: str | None
    rated_at: dt.datetime
    replaced_at: dt.datetime | None


@dataclass(frozen=True)
class ExternalRating:
    """One imported rating (see `RatingRepository.import_external`)."""

    sample_id: int
    criterion: str
    score: int | None
    status: str = "rated"
    note: str | None = None


@dataclass(frozen=True)
class Task:
    """A sample to show a rater, with what that rater has already entered for it (empty for new tasks)."""

    sample: SampleRecord
    presentation_order: int
    ratings: Mapping[str, RatingRecord]
    """criterion -> this rater's current rating."""


@dataclass(frozen=True)
class StudyRecord:
    """A crowd study (`storage.repo.studies`); the secret of its link is not here (only its hash is stored)."""

    id: int
    dataset: str
    name: str
    tasks_per_participant: int
    gold_rate: float
    completion_code: str | None
    redirect_url: str | None
    created_by: str | None
    created_at: dt.datetime
    closed_at: dt.datetime | None
    participants: int = 0
    """Participants who started the study."""
    finished: int = 0
    """Participants who finished it."""

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


@dataclass(frozen=True)
class ParticipantRecord:
    """A participant of a crowd study: the platform's participant id and the rater their answers are stored under."""

    study_id: int
    participant: str
    rater: str
    platform_study: str | None
    platform_session: str | None
    started_at: dt.datetime
    finished_at: dt.datetime | None


@dataclass(frozen=True)
class GoldRecord:
    """The accepted answer of a gold task (`storage.repo.gold`): `criterion`'s score of the sample lies in
    `low..high` (inclusive, 0-4)."""

    sample_id: int
    dataset: str
    criterion: str
    low: int
    high: int
    kind: str
    """`gold` (an admin's accepted answer) or `attention` (an attention check made from the data)."""
    note: str | None
    created_by: str | None
    created_at: dt.datetime

    def accepts(self, score: int) -> bool:
        """Whether `score` is an accepted answer."""
        return self.low <= score <= self.high


class Progress(NamedTuple):
    """Task progress of one rater over a scope (a dataset or everything).

    rated: samples this rater has finished (every criterion has a current rating, any status);
    assigned: rated + samples still waiting for this rater (unseen, fewer than K complete ratings);
    total: samples in the scope.
    """

    rated: int
    assigned: int
    total: int


@dataclass(frozen=True)
class OpenTasks:
    """What a rating-assignment rule sees (`TaskRepository.rater_screen`'s `choose`): the tasks still open for one
    rater and what has been answered over the scope, read in the same snapshot."""

    waiting: tuple[int, ...]
    """Sample ids the rater may be given (unseen, not gold, fewer than K complete ratings), in the rater's own
    shuffled order."""
    method: Mapping[int, str | None]
    """Sample id -> its method, for every sample of the scope that is not gold."""
    complete: Mapping[int, int]
    """Sample id -> its count of complete ratings, for every sample of the scope."""
    means: Mapping[str, Mapping[int, float]]
    """Criterion -> sample id -> the mean score (0-4) of the sample's `rated` ratings by app raters (imported raters
    and gold samples left out), for every sample of the scope with at least one."""


@dataclass(frozen=True)
class SampleRow:
    """A sample with its latest metric values and human ratings, for browsing and exports."""

    sample: SampleRecord
    metrics: Mapping[str, float | None]
    """metric -> latest value computed with the sample's current masks (None = undefined)."""
    ratings: Mapping[str, Mapping[str, int | None]]
    """rater -> criterion -> score (None when skipped/flagged)."""
    means: Mapping[str, float | None]
    """criterion -> mean score over all raters who rated it (None if nobody did); `cp` and `pf` always,
    `sc` / `pq` only when the sample has such ratings."""
    counts: Mapping[str, int]
    """criterion -> number of scores in the mean."""
    statuses: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """rater -> criterion -> status (`rated`, `skipped`, `flagged`)."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """rater -> their note on the sample (a flag's reason), for raters who left one."""


@dataclass(frozen=True)
class ImageInput:
    """An image's stored bytes (see `RecordingRepository.record`)."""

    data: bytes
    """The file's bytes (the SHA-256 of these is the image's identity)."""
    media_type: str | None = None
    """MIME type of `data`; None = sniffed from its first bytes."""


@dataclass(frozen=True)
class SampleInput:
    """A sample to add or find, with the keyword arguments of `SampleRepository.add`."""

    dataset: str
    subject: str
    references: tuple[str, ...] = ()
    output: str | None = None
    prompt: str | None = None
    category: str | None = None
    method: str | None = None
    seed: int | None = None
    external_key: str | None = None
    info: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class MaskInput:
    """A mask that must be the current one of image (`role`, `position`): a new version is added unless the
    current version already has these bytes."""

    role: str
    """`reference` or `output`."""
    position: int
    png: bytes
    """The mask as PNG bytes."""
    source: str
    """`drawn`, `sam`, `imported` or `text` (used only when a version is added)."""
    created_by: str | None = None
    params: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class MaskRef:
    """A mask a value was computed with: image (`role`, `position`) of the value's sample, by the SHA-256 of its
    PNG bytes; it names the newest version of that image with these bytes (stored before, or in the same
    `record` call)."""

    role: str
    position: int
    sha256: str


@dataclass(frozen=True)
class ValueInput:
    """One metric value of a `RecordInput` (its sample is the record's)."""

    metric: str
    value: float | None
    provenance: Provenance | Mapping[str, Any]
    reason: str | None = None
    extras: Mapping[str, Any] | None = None
    masks: tuple[MaskRef, ...] = ()
    """The masks the value was computed with."""
    computed_at: dt.datetime | None = None


@dataclass(frozen=True)
class RecordInput:
    """Everything one scored sample brings (see `RecordingRepository.record`)."""

    sample: SampleInput | int
    """The sample to add or find, or the id of a stored sample."""
    images: tuple[ImageInput, ...] = ()
    """Bytes of the sample's images that may not be stored yet."""
    masks: tuple[MaskInput, ...] = ()
    values: tuple[ValueInput, ...] = ()


@dataclass(frozen=True)
class Recorded:
    """What `record` did for one `RecordInput`."""

    sample: SampleRecord
    new_masks: int
    """Mask versions added."""
    new_values: tuple[MetricValueRecord, ...]
    """Values added (the others were already recorded)."""
    masks: Mapping[tuple[str, int], MaskRecord]
    """(role, position) -> the sample's current masks after the record."""
