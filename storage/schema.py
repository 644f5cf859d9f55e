"""Database tables (SQLAlchemy 2.x declarative models). Only the `storage.repo` modules query them.

Every timestamp is a timezone-aware UTC `datetime`. Nothing is ever deleted or overwritten by the
repositories: masks get new versions, metric values are appended, rating and pairwise-judgment edits keep
their history.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

CRITERIA = ("cp", "pf")
"""Criteria a rater scores in a task (the workbench's rating form): concept preservation and prompt
following. A sample counts as rated by a rater once every one of these has a rating."""
IMPORTED_CRITERIA = ("sc", "pq")
"""Criteria of imported benchmarks: ImagenHub's semantic consistency and perceptual quality. Stored on the
same integer 0-4 scale: ImagenHub's cell value x 4 (0 -> 0, 0.5 -> 2, 1 -> 4), which is lossless and leaves
ordinal/interval Krippendorff alpha unchanged; a mean divided by 4 is ImagenHub's mean."""
RATING_CRITERIA = CRITERIA + IMPORTED_CRITERIA
"""Every criterion a rating may have (schema revision 0002 and later)."""
STATUSES = ("rated", "skipped", "flagged")
"""Rating statuses; only `rated` carries a score."""
MASK_SOURCES = ("drawn", "sam", "imported", "text")
"""Where a mask version came from: brush, Segment Anything clicks, a file, text-prompted segmentation."""
IMAGE_ROLES = ("reference", "output")
"""Role of an image within a sample."""
SCORE_MIN, SCORE_MAX = 0, 4
"""Inclusive range of human scores."""
PAIR_WINNERS = ("left", "right", "tie")
"""Answers of a pairwise judgment, as the rater saw the pair: the left output, the right one, or a tie."""
GOLD_KINDS = ("gold", "attention")
"""Kinds of gold answers: `gold` (an admin gave the accepted answer of a sample) and `attention` (an attention check
made from the data itself: an output that is the reference, an output of another subject)."""
PAIR_ACCEPTED = ("a", "b", "tie")
"""Accepted answers of a gold pair, relative to the canonical order (`a` = the pair's smaller sample id)."""
MAX_PRACTICE_TASKS = 50
"""Most practice tasks a dataset's practice round may hold."""
MASKS_KEY_MAX = 500
"""Longest `metric_values.masks_key` (the mask version ids of one value, comma-joined)."""


class UTCDateTime(sa.types.TypeDecorator[dt.datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite stores them naive, in UTC)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: sa.Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: storage timestamps must be timezone-aware (UTC)")
        value = value.astimezone(dt.timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: dt.datetime | None, dialect: sa.Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dt.datetime: UTCDateTime, dict[str, Any]: sa.JSON}


class Dataset(Base):
    """A named collection of samples. `for_rating` (schema revision 0003) marks the datasets whose samples are
    handed to raters as tasks (the Score tab's scratch saves are not, unless someone marks their dataset)."""

    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(200), unique=True)
    created_at: Mapped[dt.datetime]
    for_rating: Mapped[bool] = mapped_column(sa.Boolean, server_default=sa.false())


class Subject(Base):
    """A concept (person, pet, object) within a dataset."""

    __tablename__ = "subjects"
    __table_args__ = (sa.UniqueConstraint("dataset_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(sa.ForeignKey("datasets.id"))
    name: Mapped[str] = mapped_column(sa.String(300))
    category: Mapped[str | None] = mapped_column(sa.String(100))
    created_at: Mapped[dt.datetime]


class Blob(Base):
    """Metadata of one file in the content-addressed blob store (the bytes live on disk)."""

    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    size_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    media_type: Mapped[str] = mapped_column(sa.String(100))
    created_at: Mapped[dt.datetime]


class Sample(Base):
    """One generated output judged against one or more reference images of its subject.

    A *ratings-only* sample (schema revision 0002) has no images at all and may have no prompt: it holds
    published ratings / judge values of an output whose image was not imported (yet). It always has an
    external key, so that importing its images later completes this same row.
    """

    __tablename__ = "samples"
    __table_args__ = (
        sa.UniqueConstraint("dataset_id", "external_key"),
        sa.UniqueConstraint("dataset_id", "content_key"),
        sa.Index(None, "dataset_id", "method"),
        sa.Index(None, "subject_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(sa.ForeignKey("datasets.id"))
    subject_id: Mapped[int] = mapped_column(sa.ForeignKey("subjects.id"))
    prompt: Mapped[str | None] = mapped_column(sa.Text)
    method: Mapped[str | None] = mapped_column(sa.String(200))
    seed: Mapped[int | None] = mapped_column(sa.BigInteger)
    external_key: Mapped[str | None] = mapped_column(sa.String(500))
    content_key: Mapped[str] = mapped_column(sa.String(64))
    info: Mapped[dict[str, Any] | None]
    created_at: Mapped[dt.datetime]
    complete_ratings: Mapped[int] = mapped_column(server_default="0")
    """How many raters who are not external have a current `rated` rating on every task criterion (`CRITERIA`) of
    this sample (schema revision 0006): the overlap rule's count, kept by the rating writes in the transaction that
    changes it (`storage.repo.completion`) so that assigning a task does not aggregate every rating in scope."""


class SampleImage(Base):
    """An image slot of a sample: `reference` #0..n-1 or `output` #0."""

    __tablename__ = "sample_images"
    __table_args__ = (
        sa.UniqueConstraint("sample_id", "role", "position"),
        sa.CheckConstraint(_in("role", IMAGE_ROLES), name="role"),
        sa.CheckConstraint("position >= 0", name="position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sample_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    role: Mapped[str] = mapped_column(sa.String(16))
    position: Mapped[int]
    blob_sha256: Mapped[str] = mapped_column(sa.String(64), sa.ForeignKey("blobs.sha256"))


class MaskVersion(Base):
    """One version of the mask of a sample image; the highest version that is not a proposal is the current one."""

    __tablename__ = "mask_versions"
    __table_args__ = (
        sa.UniqueConstraint("sample_image_id", "version"),
        sa.CheckConstraint(_in("source", MASK_SOURCES), name="source"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sample_image_id: Mapped[int] = mapped_column(sa.ForeignKey("sample_images.id"))
    version: Mapped[int]
    source: Mapped[str] = mapped_column(sa.String(16))
    created_by: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[dt.datetime]
    blob_sha256: Mapped[str] = mapped_column(sa.String(64), sa.ForeignKey("blobs.sha256"))
    params: Mapped[dict[str, Any] | None]
    proposal: Mapped[bool] = mapped_column(sa.Boolean, server_default=sa.false())
    """Kept for a person to check, never current nor scored with (schema revision 0007): a doubtful text mask."""


class MetricValue(Base):
    """One computed (or imported) metric value with its provenance. Appended, never updated.

    Identity (schema revision 0004): (sample, metric, provenance key, the mask versions used, `sequence`) is
    unique. `sequence` counts the earlier values with the same sample, metric, provenance key and masks (0 for
    the first), so a value appended after another (a retried failure, a changed imported number) gets the next
    one, while two writers racing to store the same value compute the same identity and the second one is
    left out (INSERT ... ON CONFLICT DO NOTHING): several batch processes never write duplicates.
    """

    __tablename__ = "metric_values"
    __table_args__ = (
        sa.Index(None, "sample_id", "metric"),
        sa.Index(None, "metric", "provenance_key"),
        sa.Index(
            "uq_metric_values_identity", "sample_id", "metric", "provenance_key", "masks_key", "sequence", unique=True
        ),
        sa.CheckConstraint("value IS NOT NULL OR reason IS NOT NULL", name="null_has_reason"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sample_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    metric: Mapped[str] = mapped_column(sa.String(100))
    value: Mapped[float | None] = mapped_column(sa.Double)
    reason: Mapped[str | None] = mapped_column(sa.Text)
    extras: Mapped[dict[str, Any] | None]
    model_id: Mapped[str | None] = mapped_column(sa.String(500))
    revision: Mapped[str | None] = mapped_column(sa.String(200))
    params: Mapped[dict[str, Any]]
    code_version: Mapped[str] = mapped_column(sa.String(200))
    device: Mapped[str | None] = mapped_column(sa.String(50))
    dtype: Mapped[str | None] = mapped_column(sa.String(50))
    provenance_key: Mapped[str] = mapped_column(sa.String(64))
    masks_key: Mapped[str] = mapped_column(sa.String(MASKS_KEY_MAX), server_default="")
    """The ids of the mask versions the value was computed with, ascending, joined by `,` ("" for none)."""
    sequence: Mapped[int] = mapped_column(server_default="0")
    """How many values with the same sample, metric, provenance key and masks were stored before this one."""
    computed_at: Mapped[dt.datetime]


class MetricValueMask(Base):
    """Which mask versions a metric value was computed with."""

    __tablename__ = "metric_value_masks"

    metric_value_id: Mapped[int] = mapped_column(sa.ForeignKey("metric_values.id"), primary_key=True)
    mask_version_id: Mapped[int] = mapped_column(sa.ForeignKey("mask_versions.id"), primary_key=True)


class Rater(Base):
    """A person (or an external group/judge whose ratings were imported) who rates samples."""

    __tablename__ = "raters"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(sa.String(200), unique=True)
    is_external: Mapped[bool] = mapped_column(sa.Boolean)
    created_at: Mapped[dt.datetime]


class Rating(Base):
    """The current rating of one (rater, sample, criterion); earlier revisions live in `rating_history`."""

    __tablename__ = "ratings"
    __table_args__ = (
        sa.UniqueConstraint("rater_id", "sample_id", "criterion"),
        sa.Index(None, "sample_id"),
        sa.CheckConstraint(_in("criterion", RATING_CRITERIA), name="criterion"),
        sa.CheckConstraint(_in("status", STATUSES), name="status"),
        sa.CheckConstraint(f"score IS NULL OR (score >= {SCORE_MIN} AND score <= {SCORE_MAX})", name="score"),
        sa.CheckConstraint("(status = 'rated') = (score IS NOT NULL)", name="score_iff_rated"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(sa.ForeignKey("raters.id"))
    sample_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    criterion: Mapped[str] = mapped_column(sa.String(8))
    score: Mapped[int | None] = mapped_column(sa.SmallInteger)
    status: Mapped[str] = mapped_column(sa.String(16))
    seconds_spent: Mapped[float | None] = mapped_column(sa.Double)
    presentation_order: Mapped[int | None]
    note: Mapped[str | None] = mapped_column(sa.Text)
    revision: Mapped[int]
    created_at: Mapped[dt.datetime]
    updated_at: Mapped[dt.datetime]


class RatingHistory(Base):
    """A superseded revision of a rating, copied here when the rating is edited."""

    __tablename__ = "rating_history"
    __table_args__ = (sa.UniqueConstraint("rating_id", "revision"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rating_id: Mapped[int] = mapped_column(sa.ForeignKey("ratings.id"))
    revision: Mapped[int]
    score: Mapped[int | None] = mapped_column(sa.SmallInteger)
    status: Mapped[str] = mapped_column(sa.String(16))
    seconds_spent: Mapped[float | None] = mapped_column(sa.Double)
    presentation_order: Mapped[int | None]
    note: Mapped[str | None] = mapped_column(sa.Text)
    rated_at: Mapped[dt.datetime]
    replaced_at: Mapped[dt.datetime]


class PairTask(Base):
    """One pair of outputs handed to one rater (a pairwise assignment), with the side each output was shown on.

    The pair is stored canonically (`sample_a_id < sample_b_id`); `left_sample_id` is the one shown on the
    left. A rater is never given the same pair twice (unique key). `token` is the opaque, random handle the
    rater's screen holds instead of sample ids (blind presentation); `position` numbers a rater's tasks 1, 2, ...
    in the order they were handed out (for going back)."""

    __tablename__ = "pair_tasks"
    __table_args__ = (
        sa.UniqueConstraint("token"),
        sa.UniqueConstraint("rater_id", "sample_a_id", "sample_b_id"),
        sa.UniqueConstraint("rater_id", "position"),
        sa.Index(None, "sample_a_id", "sample_b_id"),
        sa.CheckConstraint("sample_a_id < sample_b_id", name="canonical"),
        sa.CheckConstraint("left_sample_id = sample_a_id OR left_sample_id = sample_b_id", name="left_in_pair"),
        sa.CheckConstraint("position >= 1", name="position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    token: Mapped[str] = mapped_column(sa.String(64))
    rater_id: Mapped[int] = mapped_column(sa.ForeignKey("raters.id"))
    sample_a_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    sample_b_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    left_sample_id: Mapped[int]
    position: Mapped[int]
    assigned_at: Mapped[dt.datetime]


class PairJudgment(Base):
    """The current judgment of one (rater, pair, criterion): which output is better, as shown (left / right /
    tie), plus a "both bad" flag; earlier revisions live in `pair_judgment_history`. Judgments made in the app
    point at their task; imported ones have none."""

    __tablename__ = "pair_judgments"
    __table_args__ = (
        sa.UniqueConstraint("rater_id", "sample_a_id", "sample_b_id", "criterion"),
        sa.Index(None, "sample_a_id", "sample_b_id"),
        sa.Index(None, "task_id"),
        sa.CheckConstraint(_in("criterion", CRITERIA), name="criterion"),
        sa.CheckConstraint(_in("status", STATUSES), name="status"),
        sa.CheckConstraint(f"winner IS NULL OR {_in('winner', PAIR_WINNERS)}", name="winner"),
        sa.CheckConstraint("(status = 'rated') = (winner IS NOT NULL)", name="winner_iff_rated"),
        sa.CheckConstraint("sample_a_id < sample_b_id", name="canonical"),
        sa.CheckConstraint("left_sample_id = sample_a_id OR left_sample_id = sample_b_id", name="left_in_pair"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(sa.ForeignKey("raters.id"))
    sample_a_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    sample_b_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    left_sample_id: Mapped[int]
    criterion: Mapped[str] = mapped_column(sa.String(8))
    winner: Mapped[str | None] = mapped_column(sa.String(8))
    both_bad: Mapped[bool] = mapped_column(sa.Boolean)
    status: Mapped[str] = mapped_column(sa.String(16))
    seconds_spent: Mapped[float | None] = mapped_column(sa.Double)
    note: Mapped[str | None] = mapped_column(sa.Text)
    task_id: Mapped[int | None] = mapped_column(sa.ForeignKey("pair_tasks.id"))
    revision: Mapped[int]
    judged_at: Mapped[dt.datetime]
    created_at: Mapped[dt.datetime]
    updated_at: Mapped[dt.datetime]


class PairJudgmentHistory(Base):
    """A superseded revision of a pairwise judgment, copied here when the judgment is changed."""

    __tablename__ = "pair_judgment_history"
    __table_args__ = (sa.UniqueConstraint("judgment_id", "revision"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    judgment_id: Mapped[int] = mapped_column(sa.ForeignKey("pair_judgments.id"))
    revision: Mapped[int]
    left_sample_id: Mapped[int]
    winner: Mapped[str | None] = mapped_column(sa.String(8))
    both_bad: Mapped[bool] = mapped_column(sa.Boolean)
    status: Mapped[str] = mapped_column(sa.String(16))
    seconds_spent: Mapped[float | None] = mapped_column(sa.Double)
    note: Mapped[str | None] = mapped_column(sa.Text)
    judged_at: Mapped[dt.datetime]
    replaced_at: Mapped[dt.datetime]


class GoldAnswer(Base):
    """The accepted answer of a gold task (schema revision 0008): a sample whose `criterion` score is known to lie in
    `low..high` (inclusive, 0-4). Gold samples are mixed into raters' queues like any other task and measure each
    rater's accuracy; their ratings never count as ratings of a method. Marking a sample again replaces its accepted
    answer (the raters' ratings stay as they are)."""

    __tablename__ = "gold_answers"
    __table_args__ = (
        sa.UniqueConstraint("sample_id", "criterion"),
        sa.CheckConstraint(_in("criterion", CRITERIA), name="criterion"),
        sa.CheckConstraint(_in("kind", GOLD_KINDS), name="kind"),
        sa.CheckConstraint(f"low >= {SCORE_MIN} AND low <= high AND high <= {SCORE_MAX}", name="range"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sample_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    criterion: Mapped[str] = mapped_column(sa.String(8))
    low: Mapped[int] = mapped_column(sa.SmallInteger)
    high: Mapped[int] = mapped_column(sa.SmallInteger)
    kind: Mapped[str] = mapped_column(sa.String(16))
    note: Mapped[str | None] = mapped_column(sa.Text)
    """Why this is the accepted answer (shown to admins; to raters only as the feedback of a practice task)."""
    created_by: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[dt.datetime]


class Study(Base):
    """A crowd study (schema revision 0009): participants who arrive by its secret link rate up to `tasks_per_participant`
    tasks of one dataset, with gold tasks mixed in at `gold_rate`, and are then shown `completion_code` or sent to
    `redirect_url`. Only a hash of the link's secret is stored (`secret_hash`, SHA-256 hex), never the secret."""

    __tablename__ = "studies"
    __table_args__ = (
        sa.CheckConstraint("tasks_per_participant >= 1", name="tasks"),
        sa.CheckConstraint("completion_code IS NOT NULL OR redirect_url IS NOT NULL", name="completion"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(sa.ForeignKey("datasets.id"))
    name: Mapped[str] = mapped_column(sa.String(200))
    tasks_per_participant: Mapped[int] = mapped_column(sa.Integer)
    gold_rate: Mapped[float] = mapped_column(sa.Double)
    completion_code: Mapped[str | None] = mapped_column(sa.String(100))
    redirect_url: Mapped[str | None] = mapped_column(sa.String(2000))
    secret_hash: Mapped[str] = mapped_column(sa.String(64))
    created_by: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[dt.datetime]
    closed_at: Mapped[dt.datetime | None]
    """When an admin closed the study (None: open); a closed study takes no new participant."""


class StudyParticipant(Base):
    """A participant of a study (schema revision 0009): the participant id as the crowd platform gave it, the rater
    row their answers are stored under (one per participant and study), when they started and finished."""

    __tablename__ = "study_participants"
    __table_args__ = (sa.UniqueConstraint("study_id", "participant"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(sa.ForeignKey("studies.id"))
    participant: Mapped[str] = mapped_column(sa.String(64))
    rater_id: Mapped[int] = mapped_column(sa.ForeignKey("raters.id"), unique=True)
    platform_study: Mapped[str | None] = mapped_column(sa.String(64))
    """The platform's own study id (`STUDY_ID`) as the first visit gave it."""
    platform_session: Mapped[str | None] = mapped_column(sa.String(64))
    """The platform's session id (`SESSION_ID`) of the latest visit."""
    started_at: Mapped[dt.datetime]
    finished_at: Mapped[dt.datetime | None]


class RatingGuide(Base):
    """One version of a dataset's rating guide (schema revision 0010): the Markdown text raters read before their
    first task of the dataset, and its practice round's settings. Editing a guide adds a new version (the highest
    is the current one); earlier versions stay."""

    __tablename__ = "rating_guides"
    __table_args__ = (
        sa.UniqueConstraint("dataset_id", "version"),
        sa.CheckConstraint("version >= 1", name="version"),
        sa.CheckConstraint(f"practice_tasks >= 0 AND practice_tasks <= {MAX_PRACTICE_TASKS}", name="practice_tasks"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(sa.ForeignKey("datasets.id"))
    version: Mapped[int]
    text: Mapped[str] = mapped_column(sa.Text)
    practice_tasks: Mapped[int]
    """How many practice tasks a rater answers before their first real task of the dataset (0 = no practice)."""
    practice_skippable: Mapped[bool] = mapped_column(sa.Boolean)
    """Whether a rater may skip the practice round."""
    created_by: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[dt.datetime]


class GuideExample(Base):
    """A sample shown in its dataset's rating guide with its expected answers (schema revision 0010): the expected
    concept-preservation and prompt-following scores (at least one) and why."""

    __tablename__ = "guide_examples"
    __table_args__ = (
        sa.CheckConstraint("cp IS NOT NULL OR pf IS NOT NULL", name="answer"),
        sa.CheckConstraint(f"cp IS NULL OR (cp >= {SCORE_MIN} AND cp <= {SCORE_MAX})", name="cp"),
        sa.CheckConstraint(f"pf IS NULL OR (pf >= {SCORE_MIN} AND pf <= {SCORE_MAX})", name="pf"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sample_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"), unique=True)
    position: Mapped[int]
    cp: Mapped[int | None] = mapped_column(sa.SmallInteger)
    pf: Mapped[int | None] = mapped_column(sa.SmallInteger)
    note: Mapped[str | None] = mapped_column(sa.Text)
    created_by: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[dt.datetime]


class PracticeSample(Base):
    """A gold sample of a dataset's practice round (schema revision 0010): shown to raters before their real tasks,
    with feedback from its accepted answers and their notes; it is never handed out as a real task."""

    __tablename__ = "practice_samples"

    id: Mapped[int] = mapped_column(primary_key=True)
    sample_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"), unique=True)
    created_by: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[dt.datetime]


class PracticeAnswer(Base):
    """A rater's answer to a practice task (schema revision 0010), kept apart from `ratings`: it never counts as a
    rating (agreement, leaderboards, rater reports, task counts). One answer per (rater, sample, criterion)."""

    __tablename__ = "practice_answers"
    __table_args__ = (
        sa.UniqueConstraint("rater_id", "sample_id", "criterion"),
        sa.CheckConstraint(_in("criterion", CRITERIA), name="criterion"),
        sa.CheckConstraint(f"score >= {SCORE_MIN} AND score <= {SCORE_MAX}", name="score"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(sa.ForeignKey("raters.id"))
    sample_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    criterion: Mapped[str] = mapped_column(sa.String(8))
    score: Mapped[int] = mapped_column(sa.SmallInteger)
    created_at: Mapped[dt.datetime]


class GuideReading(Base):
    """Where a rater stands with a dataset's guide (schema revision 0010): the guide version they last read, and
    when they skipped its practice round (None = not skipped)."""

    __tablename__ = "guide_readings"
    __table_args__ = (sa.UniqueConstraint("rater_id", "dataset_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(sa.ForeignKey("raters.id"))
    dataset_id: Mapped[int] = mapped_column(sa.ForeignKey("datasets.id"))
    version_read: Mapped[int | None]
    read_at: Mapped[dt.datetime | None]
    practice_skipped_at: Mapped[dt.datetime | None]


class PairGoldAnswer(Base):
    """The accepted answer of a gold pair (schema revision 0011): of the two samples `sample_a_id < sample_b_id`,
    `accepted` is the better one on `criterion` (`a` or `b`), or `tie`. Of kind `gold` (an admin's answer) or
    `attention` (an attention check made from the data: the same output on both sides, accepted `tie`). Gold pairs
    are mixed into raters' pair queues and measure each rater's accuracy; their judgments never count for a method.
    Marking a pair again replaces its accepted answer (the raters' judgments stay as they are)."""

    __tablename__ = "pair_gold_answers"
    __table_args__ = (
        sa.UniqueConstraint("sample_a_id", "sample_b_id", "criterion"),
        sa.CheckConstraint("sample_a_id < sample_b_id", name="canonical"),
        sa.CheckConstraint(_in("criterion", CRITERIA), name="criterion"),
        sa.CheckConstraint(_in("accepted", PAIR_ACCEPTED), name="accepted"),
        sa.CheckConstraint(_in("kind", GOLD_KINDS), name="kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    sample_a_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    sample_b_id: Mapped[int] = mapped_column(sa.ForeignKey("samples.id"))
    criterion: Mapped[str] = mapped_column(sa.String(8))
    accepted: Mapped[str] = mapped_column(sa.String(8))
    kind: Mapped[str] = mapped_column(sa.String(16))
    note: Mapped[str | None] = mapped_column(sa.Text)
    """Why this is the accepted answer (shown to admins, never to raters)."""
    created_by: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[dt.datetime]


TABLES_IN_DEPENDENCY_ORDER: tuple[sa.Table, ...] = tuple(Base.metadata.sorted_tables)
"""Parents before children (for dumps and restores)."""
