"""ratings-only samples, ImagenHub criteria

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 13:50:00

- `samples.prompt` becomes nullable: a *ratings-only* sample (published ratings or judge values of an
  output whose image was not imported) has no images and may have no prompt. Images were already separate
  rows (`sample_images`), so "no images" needs no column change.
- `ratings.criterion` also accepts `sc` and `pq` (ImagenHub's semantic consistency and perceptual quality,
  stored as cell value x 4 on the 0-4 scale).

Downgrade refuses (changing nothing) while the database holds what revision 0001 cannot represent:
samples without an output image or without a prompt, or `sc` / `pq` ratings. Nothing is deleted silently.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_NEW = "criterion IN ('cp', 'pf', 'sc', 'pq')"
_OLD = "criterion IN ('cp', 'pf')"


def upgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        batch.alter_column("prompt", existing_type=sa.Text(), nullable=True)
    with op.batch_alter_table("ratings") as batch:
        batch.drop_constraint(op.f("ck_ratings_criterion"), type_="check")
        batch.create_check_constraint(op.f("ck_ratings_criterion"), sa.text(_NEW))


def downgrade() -> None:
    conn = op.get_bind()
    blockers = {
        "ratings of criterion sc or pq": "SELECT COUNT(*) FROM ratings WHERE criterion NOT IN ('cp', 'pf')",
        "samples without a prompt": "SELECT COUNT(*) FROM samples WHERE prompt IS NULL",
        "samples without an output image (ratings-only)": "SELECT COUNT(*) FROM samples WHERE id NOT IN (SELECT sample_id FROM sample_images WHERE role = 'output')",
    }
    found = {what: conn.execute(sa.text(query)).scalar() for what, query in blockers.items()}
    found = {what: n for what, n in found.items() if n}
    if found:
        raise RuntimeError(
            "cannot downgrade below revision 0002: the database holds "
            + ", ".join(f"{n} {what}" for what, n in found.items())
            + ", which revision 0001 cannot represent; dump the database (masc-ui db dump) and downgrade an "
            "empty copy, or keep this revision"
        )
    with op.batch_alter_table("ratings") as batch:
        batch.drop_constraint(op.f("ck_ratings_criterion"), type_="check")
        batch.create_check_constraint(op.f("ck_ratings_criterion"), sa.text(_OLD))
    with op.batch_alter_table("samples") as batch:
        batch.alter_column("prompt", existing_type=sa.Text(), nullable=False)
