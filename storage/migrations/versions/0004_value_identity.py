"""metric value identity: one row per (sample, metric, provenance, masks, sequence)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 19:50:00

- `metric_values.masks_key`: the ids of the mask versions a value was computed with, ascending, joined by `,`
  ("" for none); `metric_values.sequence`: how many values with the same sample, metric, provenance key and
  masks were stored before it. Both are filled in for the rows already stored (in id order), so values that an
  older version stored twice stay, each with its own sequence number.
- A unique index over (sample_id, metric, provenance_key, masks_key, sequence): two processes storing the same
  value at once (plain `masc-ui batch` processes, two imports of the same judge values) compute the same
  identity, and the second insert is left out instead of writing a duplicate.

Downgrade drops the index and the two columns (nothing else is lost).
"""

from __future__ import annotations

from collections import defaultdict

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_INDEX = "uq_metric_values_identity"


def upgrade() -> None:
    with op.batch_alter_table("metric_values") as batch:
        batch.add_column(sa.Column("masks_key", sa.String(length=500), server_default="", nullable=False))
        batch.add_column(sa.Column("sequence", sa.Integer(), server_default="0", nullable=False))
    _backfill(op.get_bind())
    op.create_index(
        _INDEX, "metric_values", ["sample_id", "metric", "provenance_key", "masks_key", "sequence"], unique=True
    )


def downgrade() -> None:
    op.drop_index(_INDEX, table_name="metric_values")
    with op.batch_alter_table("metric_values") as batch:
        batch.drop_column("sequence")
        batch.drop_column("masks_key")


def _backfill(conn: sa.Connection) -> None:
    masks: dict[int, list[int]] = defaultdict(list)
    for value_id, mask_id in conn.execute(
        sa.text("SELECT metric_value_id, mask_version_id FROM metric_value_masks ORDER BY mask_version_id")
    ):
        masks[value_id].append(mask_id)
    seen: dict[tuple[int, str, str, str], int] = defaultdict(int)
    updates = []
    for value_id, sample_id, metric, key in conn.execute(
        sa.text("SELECT id, sample_id, metric, provenance_key FROM metric_values ORDER BY id")
    ):
        masks_key = ",".join(str(m) for m in masks.get(value_id, []))
        identity = (sample_id, metric, key, masks_key)
        updates.append({"id": value_id, "masks_key": masks_key, "sequence": seen[identity]})
        seen[identity] += 1
    changed = [u for u in updates if u["masks_key"] or u["sequence"]]
    for start in range(0, len(changed), 1000):
        conn.execute(
            sa.text("UPDATE metric_values SET masks_key = :masks_key, sequence = :sequence WHERE id = :id"),
            changed[start : start + 1000],
        )
