"""complete ratings counted per sample

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 10:00:00

- `samples.complete_ratings` (integer, not null, default 0): how many raters who are not external have a current
  `rated` rating on both task criteria (cp, pf) of the sample, the count the task assignment's overlap rule
  needs. From this revision on the rating writes keep it (`storage.repo.completion`); the upgrade fills it in
  from the ratings already stored. `masc-ui db check` compares it with the ratings.

Downgrade drops the column; it is derived from the ratings, so nothing is lost.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

TASK_CRITERIA = ("cp", "pf")
"""`storage.schema.CRITERIA` at this revision (written out: a migration does not follow later code)."""


def upgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        batch.add_column(sa.Column("complete_ratings", sa.Integer(), server_default="0", nullable=False))
    conn = op.get_bind()
    counts = conn.execute(
        sa.text(
            "SELECT sample_id, COUNT(*) FROM ("
            " SELECT r.sample_id AS sample_id FROM ratings r JOIN raters w ON w.id = r.rater_id"
            " WHERE r.status = 'rated' AND w.is_external = :no AND r.criterion IN :criteria"
            " GROUP BY r.sample_id, r.rater_id HAVING COUNT(*) = :n) complete GROUP BY sample_id"
        ).bindparams(sa.bindparam("criteria", expanding=True)),
        {"no": False, "criteria": list(TASK_CRITERIA), "n": len(TASK_CRITERIA)},
    ).all()
    if counts:
        conn.execute(
            sa.text("UPDATE samples SET complete_ratings = :n WHERE id = :id"),
            [{"id": sample_id, "n": n} for sample_id, n in counts],
        )


def downgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        batch.drop_column("complete_ratings")
