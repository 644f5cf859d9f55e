"""pairwise judgments

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 19:41:05

Pairwise human judgments ("which of two outputs is better", per criterion) next to the absolute ratings:
- `pair_tasks`: a pair of outputs handed to a rater (the assignment), the side each was shown on, an opaque
  token for the rater's screen, the rater's task position; one per (rater, pair);
- `pair_judgments`: the current answer of one (rater, pair, criterion): left / right / tie, a "both bad" flag,
  status rated / skipped / flagged, time spent, the task it answers (none for imported judgments);
- `pair_judgment_history`: superseded revisions of a judgment.

Downgrade refuses (changing nothing) while these tables hold rows: revision 0004 cannot represent them and
nothing is deleted silently.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pair_tasks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("sample_a_id", sa.Integer(), nullable=False),
        sa.Column("sample_b_id", sa.Integer(), nullable=False),
        sa.Column("left_sample_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("assigned_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "left_sample_id = sample_a_id OR left_sample_id = sample_b_id", name=op.f("ck_pair_tasks_left_in_pair")
        ),
        sa.CheckConstraint("position >= 1", name=op.f("ck_pair_tasks_position")),
        sa.CheckConstraint("sample_a_id < sample_b_id", name=op.f("ck_pair_tasks_canonical")),
        sa.ForeignKeyConstraint(["rater_id"], ["raters.id"], name=op.f("fk_pair_tasks_rater_id_raters")),
        sa.ForeignKeyConstraint(["sample_a_id"], ["samples.id"], name=op.f("fk_pair_tasks_sample_a_id_samples")),
        sa.ForeignKeyConstraint(["sample_b_id"], ["samples.id"], name=op.f("fk_pair_tasks_sample_b_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pair_tasks")),
        sa.UniqueConstraint("rater_id", "position", name=op.f("uq_pair_tasks_rater_id_position")),
        sa.UniqueConstraint(
            "rater_id", "sample_a_id", "sample_b_id", name=op.f("uq_pair_tasks_rater_id_sample_a_id_sample_b_id")
        ),
        sa.UniqueConstraint("token", name=op.f("uq_pair_tasks_token")),
    )
    op.create_index(
        op.f("ix_pair_tasks_sample_a_id_sample_b_id"), "pair_tasks", ["sample_a_id", "sample_b_id"], unique=False
    )
    op.create_table(
        "pair_judgments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("sample_a_id", sa.Integer(), nullable=False),
        sa.Column("sample_b_id", sa.Integer(), nullable=False),
        sa.Column("left_sample_id", sa.Integer(), nullable=False),
        sa.Column("criterion", sa.String(length=8), nullable=False),
        sa.Column("winner", sa.String(length=8), nullable=True),
        sa.Column("both_bad", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("seconds_spent", sa.Double(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("task_id", sa.Integer(), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("judged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "(status = 'rated') = (winner IS NOT NULL)", name=op.f("ck_pair_judgments_winner_iff_rated")
        ),
        sa.CheckConstraint("criterion IN ('cp', 'pf')", name=op.f("ck_pair_judgments_criterion")),
        sa.CheckConstraint("status IN ('rated', 'skipped', 'flagged')", name=op.f("ck_pair_judgments_status")),
        sa.CheckConstraint(
            "winner IS NULL OR winner IN ('left', 'right', 'tie')", name=op.f("ck_pair_judgments_winner")
        ),
        sa.CheckConstraint(
            "left_sample_id = sample_a_id OR left_sample_id = sample_b_id", name=op.f("ck_pair_judgments_left_in_pair")
        ),
        sa.CheckConstraint("sample_a_id < sample_b_id", name=op.f("ck_pair_judgments_canonical")),
        sa.ForeignKeyConstraint(["rater_id"], ["raters.id"], name=op.f("fk_pair_judgments_rater_id_raters")),
        sa.ForeignKeyConstraint(["sample_a_id"], ["samples.id"], name=op.f("fk_pair_judgments_sample_a_id_samples")),
        sa.ForeignKeyConstraint(["sample_b_id"], ["samples.id"], name=op.f("fk_pair_judgments_sample_b_id_samples")),
        sa.ForeignKeyConstraint(["task_id"], ["pair_tasks.id"], name=op.f("fk_pair_judgments_task_id_pair_tasks")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pair_judgments")),
        sa.UniqueConstraint(
            "rater_id",
            "sample_a_id",
            "sample_b_id",
            "criterion",
            name=op.f("uq_pair_judgments_rater_id_sample_a_id_sample_b_id_criterion"),
        ),
    )
    op.create_index(
        op.f("ix_pair_judgments_sample_a_id_sample_b_id"),
        "pair_judgments",
        ["sample_a_id", "sample_b_id"],
        unique=False,
    )
    op.create_index(op.f("ix_pair_judgments_task_id"), "pair_judgments", ["task_id"], unique=False)
    op.create_table(
        "pair_judgment_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("judgment_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("left_sample_id", sa.Integer(), nullable=False),
        sa.Column("winner", sa.String(length=8), nullable=True),
        sa.Column("both_bad", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("seconds_spent", sa.Double(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("judged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("replaced_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["judgment_id"], ["pair_judgments.id"], name=op.f("fk_pair_judgment_history_judgment_id_pair_judgments")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pair_judgment_history")),
        sa.UniqueConstraint("judgment_id", "revision", name=op.f("uq_pair_judgment_history_judgment_id_revision")),
    )


def downgrade() -> None:
    conn = op.get_bind()
    found = {
        table: conn.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar()
        for table in ("pair_tasks", "pair_judgments")
    }
    found = {table: n for table, n in found.items() if n}
    if found:
        raise RuntimeError(
            "cannot downgrade below revision 0005: the database holds "
            + ", ".join(f"{n} rows of {table}" for table, n in found.items())
            + " (pairwise tasks and judgments), which revision 0004 cannot represent; dump the database "
            "(masc-ui db dump) and downgrade an empty copy, or keep this revision"
        )
    op.drop_table("pair_judgment_history")
    op.drop_index(op.f("ix_pair_judgments_task_id"), table_name="pair_judgments")
    op.drop_index(op.f("ix_pair_judgments_sample_a_id_sample_b_id"), table_name="pair_judgments")
    op.drop_table("pair_judgments")
    op.drop_index(op.f("ix_pair_tasks_sample_a_id_sample_b_id"), table_name="pair_tasks")
    op.drop_table("pair_tasks")
