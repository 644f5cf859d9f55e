"""rating guides

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 18:00:00

`rating_guides` (each version of a dataset's rating guide and its practice round's settings), `guide_examples` (the
guide's example samples with their expected answers), `practice_samples` (the gold samples of a practice round),
`practice_answers` (raters' practice answers, kept apart from `ratings`) and `guide_readings` (the guide version
each rater last read, and whether they skipped the practice round). Downgrade refuses (changing nothing) while any
of these tables holds rows: revision 0009 cannot represent them and nothing is deleted silently.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

TABLES = ("guide_readings", "practice_answers", "practice_samples", "guide_examples", "rating_guides")


def upgrade() -> None:
    op.create_table(
        "rating_guides",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("practice_tasks", sa.Integer(), nullable=False),
        sa.Column("practice_skippable", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("version >= 1", name=op.f("ck_rating_guides_version")),
        sa.CheckConstraint(
            "practice_tasks >= 0 AND practice_tasks <= 50", name=op.f("ck_rating_guides_practice_tasks")
        ),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name=op.f("fk_rating_guides_dataset_id_datasets")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_guides")),
        sa.UniqueConstraint("dataset_id", "version", name=op.f("uq_rating_guides_dataset_id_version")),
    )
    op.create_table(
        "guide_examples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("cp", sa.SmallInteger(), nullable=True),
        sa.Column("pf", sa.SmallInteger(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("cp IS NOT NULL OR pf IS NOT NULL", name=op.f("ck_guide_examples_answer")),
        sa.CheckConstraint("cp IS NULL OR (cp >= 0 AND cp <= 4)", name=op.f("ck_guide_examples_cp")),
        sa.CheckConstraint("pf IS NULL OR (pf >= 0 AND pf <= 4)", name=op.f("ck_guide_examples_pf")),
        sa.ForeignKeyConstraint(["sample_id"], ["samples.id"], name=op.f("fk_guide_examples_sample_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_guide_examples")),
        sa.UniqueConstraint("sample_id", name=op.f("uq_guide_examples_sample_id")),
    )
    op.create_table(
        "practice_samples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["sample_id"], ["samples.id"], name=op.f("fk_practice_samples_sample_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_practice_samples")),
        sa.UniqueConstraint("sample_id", name=op.f("uq_practice_samples_sample_id")),
    )
    op.create_table(
        "practice_answers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.Integer(), nullable=False),
        sa.Column("criterion", sa.String(length=8), nullable=False),
        sa.Column("score", sa.SmallInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("criterion IN ('cp', 'pf')", name=op.f("ck_practice_answers_criterion")),
        sa.CheckConstraint("score >= 0 AND score <= 4", name=op.f("ck_practice_answers_score")),
        sa.ForeignKeyConstraint(["rater_id"], ["raters.id"], name=op.f("fk_practice_answers_rater_id_raters")),
        sa.ForeignKeyConstraint(["sample_id"], ["samples.id"], name=op.f("fk_practice_answers_sample_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_practice_answers")),
        sa.UniqueConstraint(
            "rater_id", "sample_id", "criterion", name=op.f("uq_practice_answers_rater_id_sample_id_criterion")
        ),
    )
    op.create_table(
        "guide_readings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("version_read", sa.Integer(), nullable=True),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("practice_skipped_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name=op.f("fk_guide_readings_dataset_id_datasets")),
        sa.ForeignKeyConstraint(["rater_id"], ["raters.id"], name=op.f("fk_guide_readings_rater_id_raters")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_guide_readings")),
        sa.UniqueConstraint("rater_id", "dataset_id", name=op.f("uq_guide_readings_rater_id_dataset_id")),
    )


def downgrade() -> None:
    bind = op.get_bind()
    held = {name: bind.execute(sa.text(f"SELECT COUNT(*) FROM {name}")).scalar() for name in TABLES}
    held = {name: n for name, n in held.items() if n}
    if held:
        what = ", ".join(f"{n} rows in {name}" for name, n in held.items())
        raise RuntimeError(
            f"cannot downgrade below revision 0010: the database holds rating guides ({what}), which revision 0009 "
            "cannot represent; dump the database (masc-ui db dump) and downgrade an empty copy, or keep this revision"
        )
    for name in TABLES:
        op.drop_table(name)
