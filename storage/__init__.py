"""Persistent storage of MaSC Workbench: samples, masks, metric values with provenance, raters,
ratings and pairwise judgments, in SQLite (embedded default) or PostgreSQL (`DATABASE_URL`), plus a
content-addressed blob store.

    from storage import open_store
    store = open_store(None, Path("data"))          # SQLite at data/masc.sqlite3
    sha = store.images.add(png_bytes)
    sample = store.samples.add("my-set", references=[sha], output=sha2, prompt="a dog on a beach",
                               subject="dog")
    store.ratings.ensure_rater("alice")
    store.ratings.rate("alice", sample.id, "cp", 3, seconds_spent=12.5)

Knows nothing of torch, gradio or the masc_ui package.
"""

from __future__ import annotations

from .engine import RECOMMENDED_SQLITE, OldSQLiteWarning
from .errors import (
    BlobCorrupt,
    BlobMissing,
    Conflict,
    DatabaseCorrupt,
    DuplicateKey,
    InvalidInput,
    InvalidRating,
    NotAMascDatabase,
    NotFound,
    OutOfSpace,
    RestoreError,
    SchemaTooNew,
    StorageBusy,
    StorageError,
)
from .guide_records import GuideExampleRecord, GuideReadingRecord, GuideRecord, PracticeAnswerRecord
from .pair_records import (
    ExternalPairJudgment,
    PairAnswer,
    PairAssignmentState,
    PairCandidateRecord,
    PairChoice,
    PairGoldRecord,
    PairJudgmentRecord,
    PairJudgmentRevision,
    PairTaskRecord,
)
from .provenance import provenance_key
from .record_types import (
    DatasetRecord,
    ExternalRating,
    GoldRecord,
    ImageInput,
    MaskInput,
    MaskRecord,
    MaskRef,
    MetricInput,
    MetricValueRecord,
    OpenTasks,
    ParticipantRecord,
    Progress,
    Provenance,
    RaterRecord,
    RatingRecord,
    RatingRevision,
    Recorded,
    RecordInput,
    SampleInput,
    SampleRecord,
    SampleRow,
    StudyRecord,
    SubjectRecord,
    Task,
    ValueInput,
)
from .repo.metrics import EXTERNAL_CODE_VERSION
from .schema import (
    CRITERIA,
    IMAGE_ROLES,
    IMPORTED_CRITERIA,
    MASK_SOURCES,
    PAIR_WINNERS,
    RATING_CRITERIA,
    SCORE_MAX,
    SCORE_MIN,
    STATUSES,
)
from .store import Store, open_store, upgrade_database

__all__ = [
    "open_store",
    "upgrade_database",
    "Store",
    "provenance_key",
    "EXTERNAL_CODE_VERSION",
    "CRITERIA",
    "IMPORTED_CRITERIA",
    "RATING_CRITERIA",
    "STATUSES",
    "MASK_SOURCES",
    "IMAGE_ROLES",
    "SCORE_MIN",
    "SCORE_MAX",
    "RECOMMENDED_SQLITE",
    "DatasetRecord",
    "SubjectRecord",
    "SampleRecord",
    "MaskRecord",
    "Provenance",
    "MetricInput",
    "MetricValueRecord",
    "RaterRecord",
    "RatingRecord",
    "RatingRevision",
    "ExternalRating",
    "GoldRecord",
    "StudyRecord",
    "ParticipantRecord",
    "GuideExampleRecord",
    "GuideReadingRecord",
    "GuideRecord",
    "Task",
    "PracticeAnswerRecord",
    "OpenTasks",
    "Progress",
    "SampleRow",
    "ImageInput",
    "SampleInput",
    "MaskInput",
    "MaskRef",
    "ValueInput",
    "RecordInput",
    "Recorded",
    "PAIR_WINNERS",
    "PairTaskRecord",
    "PairGoldRecord",
    "PairJudgmentRecord",
    "PairJudgmentRevision",
    "PairAnswer",
    "ExternalPairJudgment",
    "PairChoice",
    "PairAssignmentState",
    "PairCandidateRecord",
    "StorageError",
    "InvalidInput",
    "InvalidRating",
    "NotFound",
    "BlobMissing",
    "BlobCorrupt",
    "DuplicateKey",
    "Conflict",
    "SchemaTooNew",
    "NotAMascDatabase",
    "StorageBusy",
    "RestoreError",
    "OutOfSpace",
    "DatabaseCorrupt",
    "OldSQLiteWarning",
]
