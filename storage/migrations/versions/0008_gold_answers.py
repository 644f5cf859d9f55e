"""gold answers

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 14:50:00

`gold_answers`: the accepted answer (a score range `low..high` of one criterion) of a gold task, of kind `gold`
(given by an admin) or `attention` (an attention check made from the data). Downgrade refuses (changing nothing)
while the table holds rows: revision 0007 cannot represent them and nothing is deleted silently.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gold_answers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.Integer(), nullable=False),
        sa.Column("criterion", sa.String(length=8), nullable=False),
        sa.Column("low", sa.SmallInteger(), nullable=False),
        sa.Column("high", sa.SmallInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("criterion IN ('cp', 'pf')", name=op.f("ck_gold_answers_criterion")),
        sa.CheckConstraint("kind IN ('gold', 'attention')", name=op.f("ck_gold_answers_kind")),
        sa.CheckConstraint("low >= 0 AND low <= high AND high <= 4", name=op.f("ck_gold_answers_range")),
        sa.ForeignKeyConstraint(["sample_id"], ["samples.id"], name=op.f("fk_gold_answers_sample_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gold_answers")),
        sa.UniqueConstraint("sample_id", "criterion", name=op.f("uq_gold_answers_sample_id_criterion")),
    )


def downgrade() -> None:
    n = op.get_bind().execute(sa.text("SELECT COUNT(*) FROM gold_answers")).scalar()
    if n:
        raise RuntimeError(
            f"cannot downgrade below revision 0008: the database holds {n} gold answers, which revision 0007 cannot "
            "represent; dump the database (masc-ui db dump) and downgrade an empty copy, or keep this revision"
        )
    op.drop_table("gold_answers")
