"""crowd studies

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 18:00:00

`studies`: a crowd study of one dataset (tasks per participant, gold rate, completion code and/or redirect URL, the
SHA-256 of its link's secret, open or closed); `study_participants`: each participant of a study (the platform's
participant id, the rater row their answers are stored under, started and finished). Downgrade refuses (changing
nothing) while either table holds rows: revision 0008 cannot represent them and nothing is deleted silently.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("tasks_per_participant", sa.Integer(), nullable=False),
        sa.Column("gold_rate", sa.Double(), nullable=False),
        sa.Column("completion_code", sa.String(length=100), nullable=True),
        sa.Column("redirect_url", sa.String(length=2000), nullable=True),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("tasks_per_participant >= 1", name=op.f("ck_studies_tasks")),
        sa.CheckConstraint(
            "completion_code IS NOT NULL OR redirect_url IS NOT NULL", name=op.f("ck_studies_completion")
        ),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name=op.f("fk_studies_dataset_id_datasets")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_studies")),
    )
    op.create_table(
        "study_participants",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("participant", sa.String(length=64), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("platform_study", sa.String(length=64), nullable=True),
        sa.Column("platform_session", sa.String(length=64), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["rater_id"], ["raters.id"], name=op.f("fk_study_participants_rater_id_raters")),
        sa.ForeignKeyConstraint(["study_id"], ["studies.id"], name=op.f("fk_study_participants_study_id_studies")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_study_participants")),
        sa.UniqueConstraint("rater_id", name=op.f("uq_study_participants_rater_id")),
        sa.UniqueConstraint("study_id", "participant", name=op.f("uq_study_participants_study_id_participant")),
    )


def downgrade() -> None:
    bind = op.get_bind()
    n = sum(
        bind.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar() or 0
        for table in ("study_participants", "studies")
    )
    if n:
        raise RuntimeError(
            f"cannot downgrade below revision 0009: the database holds {n} crowd study rows (studies and their "
            "participants), which revision 0008 cannot represent; dump the database (masc-ui db dump) and downgrade "
            "an empty copy, or keep this revision"
        )
    op.drop_table("study_participants")
    op.drop_table("studies")
