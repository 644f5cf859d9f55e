"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 12:49:09

The first schema: datasets, subjects, blobs, samples and their images, mask versions, metric values with
provenance, raters, ratings and rating history (see storage/schema.py for what each table holds).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "blobs",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("media_type", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_blobs")),
    )
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_datasets")),
        sa.UniqueConstraint("name", name=op.f("uq_datasets_name")),
    )
    op.create_table(
        "raters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=200), nullable=False),
        sa.Column("is_external", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_raters")),
        sa.UniqueConstraint("username", name=op.f("uq_raters_username")),
    )
    op.create_table(
        "subjects",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("category", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name=op.f("fk_subjects_dataset_id_datasets")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subjects")),
        sa.UniqueConstraint("dataset_id", "name", name=op.f("uq_subjects_dataset_id_name")),
    )
    op.create_table(
        "samples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("subject_id", sa.Integer(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("method", sa.String(length=200), nullable=True),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("external_key", sa.String(length=500), nullable=True),
        sa.Column("content_key", sa.String(length=64), nullable=False),
        sa.Column("info", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name=op.f("fk_samples_dataset_id_datasets")),
        sa.ForeignKeyConstraint(["subject_id"], ["subjects.id"], name=op.f("fk_samples_subject_id_subjects")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_samples")),
        sa.UniqueConstraint("dataset_id", "content_key", name=op.f("uq_samples_dataset_id_content_key")),
        sa.UniqueConstraint("dataset_id", "external_key", name=op.f("uq_samples_dataset_id_external_key")),
    )
    op.create_index(op.f("ix_samples_dataset_id_method"), "samples", ["dataset_id", "method"], unique=False)
    op.create_index(op.f("ix_samples_subject_id"), "samples", ["subject_id"], unique=False)
    op.create_table(
        "metric_values",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(length=100), nullable=False),
        sa.Column("value", sa.Double(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("extras", sa.JSON(), nullable=True),
        sa.Column("model_id", sa.String(length=500), nullable=True),
        sa.Column("revision", sa.String(length=200), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("code_version", sa.String(length=200), nullable=False),
        sa.Column("device", sa.String(length=50), nullable=True),
        sa.Column("dtype", sa.String(length=50), nullable=True),
        sa.Column("provenance_key", sa.String(length=64), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("value IS NOT NULL OR reason IS NOT NULL", name=op.f("ck_metric_values_null_has_reason")),
        sa.ForeignKeyConstraint(["sample_id"], ["samples.id"], name=op.f("fk_metric_values_sample_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric_values")),
    )
    op.create_index(
        op.f("ix_metric_values_metric_provenance_key"), "metric_values", ["metric", "provenance_key"], unique=False
    )
    op.create_index(op.f("ix_metric_values_sample_id_metric"), "metric_values", ["sample_id", "metric"], unique=False)
    op.create_table(
        "ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.Integer(), nullable=False),
        sa.Column("criterion", sa.String(length=8), nullable=False),
        sa.Column("score", sa.SmallInteger(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("seconds_spent", sa.Double(), nullable=True),
        sa.Column("presentation_order", sa.Integer(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("(status = 'rated') = (score IS NOT NULL)", name=op.f("ck_ratings_score_iff_rated")),
        sa.CheckConstraint("criterion IN ('cp', 'pf')", name=op.f("ck_ratings_criterion")),
        sa.CheckConstraint("status IN ('rated', 'skipped', 'flagged')", name=op.f("ck_ratings_status")),
        sa.CheckConstraint("score IS NULL OR (score >= 0 AND score <= 4)", name=op.f("ck_ratings_score")),
        sa.ForeignKeyConstraint(["rater_id"], ["raters.id"], name=op.f("fk_ratings_rater_id_raters")),
        sa.ForeignKeyConstraint(["sample_id"], ["samples.id"], name=op.f("fk_ratings_sample_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ratings")),
        sa.UniqueConstraint("rater_id", "sample_id", "criterion", name=op.f("uq_ratings_rater_id_sample_id_criterion")),
    )
    op.create_index(op.f("ix_ratings_sample_id"), "ratings", ["sample_id"], unique=False)
    op.create_table(
        "sample_images",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("blob_sha256", sa.String(length=64), nullable=False),
        sa.CheckConstraint("role IN ('reference', 'output')", name=op.f("ck_sample_images_role")),
        sa.CheckConstraint("position >= 0", name=op.f("ck_sample_images_position")),
        sa.ForeignKeyConstraint(["blob_sha256"], ["blobs.sha256"], name=op.f("fk_sample_images_blob_sha256_blobs")),
        sa.ForeignKeyConstraint(["sample_id"], ["samples.id"], name=op.f("fk_sample_images_sample_id_samples")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sample_images")),
        sa.UniqueConstraint("sample_id", "role", "position", name=op.f("uq_sample_images_sample_id_role_position")),
    )
    op.create_table(
        "mask_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sample_image_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("blob_sha256", sa.String(length=64), nullable=False),
        sa.Column("params", sa.JSON(), nullable=True),
        sa.CheckConstraint("source IN ('drawn', 'sam', 'imported', 'text')", name=op.f("ck_mask_versions_source")),
        sa.ForeignKeyConstraint(["blob_sha256"], ["blobs.sha256"], name=op.f("fk_mask_versions_blob_sha256_blobs")),
        sa.ForeignKeyConstraint(
            ["sample_image_id"], ["sample_images.id"], name=op.f("fk_mask_versions_sample_image_id_sample_images")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mask_versions")),
        sa.UniqueConstraint("sample_image_id", "version", name=op.f("uq_mask_versions_sample_image_id_version")),
    )
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rating_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("score", sa.SmallInteger(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("seconds_spent", sa.Double(), nullable=True),
        sa.Column("presentation_order", sa.Integer(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("replaced_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["rating_id"], ["ratings.id"], name=op.f("fk_rating_history_rating_id_ratings")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_history")),
        sa.UniqueConstraint("rating_id", "revision", name=op.f("uq_rating_history_rating_id_revision")),
    )
    op.create_table(
        "metric_value_masks",
        sa.Column("metric_value_id", sa.Integer(), nullable=False),
        sa.Column("mask_version_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["mask_version_id"], ["mask_versions.id"], name=op.f("fk_metric_value_masks_mask_version_id_mask_versions")
        ),
        sa.ForeignKeyConstraint(
            ["metric_value_id"], ["metric_values.id"], name=op.f("fk_metric_value_masks_metric_value_id_metric_values")
        ),
        sa.PrimaryKeyConstraint("metric_value_id", "mask_version_id", name=op.f("pk_metric_value_masks")),
    )


def downgrade() -> None:
    op.drop_table("metric_value_masks")
    op.drop_table("rating_history")
    op.drop_table("mask_versions")
    op.drop_table("sample_images")
    op.drop_index(op.f("ix_ratings_sample_id"), table_name="ratings")
    op.drop_table("ratings")
    op.drop_index(op.f("ix_metric_values_sample_id_metric"), table_name="metric_values")
    op.drop_index(op.f("ix_metric_values_metric_provenance_key"), table_name="metric_values")
    op.drop_table("metric_values")
    op.drop_index(op.f("ix_samples_subject_id"), table_name="samples")
    op.drop_index(op.f("ix_samples_dataset_id_method"), table_name="samples")
    op.drop_table("samples")
    op.drop_table("subjects")
    op.drop_table("raters")
    op.drop_table("datasets")
    op.drop_table("blobs")
