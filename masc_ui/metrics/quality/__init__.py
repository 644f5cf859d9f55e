"""Quality and preference scores of one image (ArtScore)."""
