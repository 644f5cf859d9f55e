"""The DINO family: DINO-I (cosine of self-supervised ViT CLS embeddings)."""
