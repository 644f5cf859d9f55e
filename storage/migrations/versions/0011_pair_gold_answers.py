"""pair gold answers

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 18:55:00

`pair_gold_answers`: the accepted answer (`a`, `b` or `tie` of the canonical pair `sample_a_id < sample_b_id`) of one
criterion of a gold pair, of kind `gold` (given by an admin) or `attention` (an attention check made from the data).
Downgrade refuses (changing nothing) while the table holds rows: revision 0010 cannot represent them and nothing is
deleted silently.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pair_gold_answers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sample_a_id", sa.Integer(), nullable=False),
        sa.Column("sample_b_id", sa.Integer(), nullable=False),
        sa.Column("criterion", sa.String(length=8), nullable=False),
        sa.Column("accepted", sa.String(length=8), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("sample_a_id < sample_b_id", name=op.f("ck_pair_gold_answers_canonical")),
        sa.CheckConstraint("criterion IN ('cp', 'pf')", name=op.f("ck_pair_gold_answers_criterion")),
        sa.CheckConstraint("accepted IN ('a', 'b', 'tie')", name=op.f("ck_pair_gold_answers_accepted")),
        sa.CheckConstraint("kind IN ('gold', 'attention')", name=op.f("ck_pair_gold_answers_kind")),
        sa.ForeignKeyConstraint(["sample_a_id"], ["samples.id"], name=op.f("fk_pair_gold_answers_sample_a_id_samples")),
        sa.ForeignKeyConstraint(["sample_b_id"], ["samples.id"], name=op.f("fk_pair_gold_answers_sample_b_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pair_gold_answers")),
        sa.UniqueConstraint(
            "sample_a_id",
            "sample_b_id",
            "criterion",
            name=op.f("uq_pair_gold_answers_sample_a_id_sample_b_id_criterion"),
        ),
    )


def downgrade() -> None:
    n = op.get_bind().execute(sa.text("SELECT COUNT(*) FROM pair_gold_answers")).scalar()
    if n:
        raise RuntimeError(
            f"cannot downgrade below revision 0011: the database holds {n} pair gold answers, which revision 0010 "
            "cannot represent; dump the database (masc-ui db dump) and downgrade an empty copy, or keep this revision"
        )
    op.drop_table("pair_gold_answers")
