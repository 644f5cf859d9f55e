"""mask versions kept as proposals

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 15:00:00

- `mask_versions.proposal` (boolean, not null, default false): a version kept for a person to check, never the
  image's current mask and never scored with (a doubtful text-prompted mask of `masc-ui batch --masks text
  --store-masks`: empty, or smaller than the minimum fraction). The current mask of an image is its highest
  version that is not a proposal. Every version stored before this revision is a mask in use: the upgrade marks
  none as a proposal, so no current mask changes.

Downgrade deletes the proposals (below this revision the highest version is current, and a proposal must not
become one); no value was computed with them, so no metric value is touched.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("mask_versions") as batch:
        batch.add_column(sa.Column("proposal", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    versions = sa.table("mask_versions", sa.column("proposal", sa.Boolean))
    op.execute(versions.delete().where(versions.c.proposal.is_(True)))
    with op.batch_alter_table("mask_versions") as batch:
        batch.drop_column("proposal")
