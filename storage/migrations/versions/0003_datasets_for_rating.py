"""datasets marked for rating

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 10:00:00

- `datasets.for_rating` (boolean, not null, default false): raters are handed tasks only from the datasets
  marked for rating. Until this revision every dataset was rated, so an upgrade marks every existing dataset
  (a rating campaign in progress goes on unchanged) except `workbench`, the web app's default dataset for the
  Score tab's own saves (scratch samples a researcher scores are not rating tasks). New datasets start
  unmarked; `masc-ui import` marks the datasets it fills unless told not to, and an admin marks or unmarks a
  dataset in the Browse tab or with `masc-ui db for-rating NAME [--off]`.
- A flag's reason is the rating's `note` (present since 0001): nothing to migrate for it.

Downgrade drops the column, so which datasets were marked is forgotten (a later upgrade marks them all again,
as for any database older than this revision); no sample, mask, value or rating is touched.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

SCRATCH_DATASET = "workbench"
"""The web app's default dataset for Score-tab saves; left unmarked by the upgrade."""


def upgrade() -> None:
    with op.batch_alter_table("datasets") as batch:
        batch.add_column(sa.Column("for_rating", sa.Boolean(), server_default=sa.false(), nullable=False))
    datasets = sa.table("datasets", sa.column("name", sa.String), sa.column("for_rating", sa.Boolean))
    op.execute(datasets.update().where(datasets.c.name != SCRATCH_DATASET).values(for_rating=True))


def downgrade() -> None:
    with op.batch_alter_table("datasets") as batch:
        batch.drop_column("for_rating")
