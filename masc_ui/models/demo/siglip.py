"""Tiny random SigLIP2 checkpoints (NaFlex and fixed-size), built offline and seeded.

Both are saved with `save_pretrained` (model, image processor, tokenizer) and load back through
`transformers.AutoModel` / `AutoProcessor`, i.e. the same path as the real Google checkpoints:

- `build_naflex`: model type `siglip2`, `Siglip2ImageProcessor` (aspect-preserving, patch budget),
  like `google/siglip2-*-naflex`.
- `build_fixed`: model type `siglip`, `SiglipImageProcessor` (square resize to `image_size`), like the
  fixed-resolution `google/siglip2-*-224` checkpoints.

The tokenizer is a Gemma-style byte-fallback BPE (`Siglip2Tokenizer`, lower-casing) whose vocabulary
is the special tokens, a few characters and the 256 byte tokens; text length 64 as in SigLIP2.
"""

from __future__ import annotations

import string
from pathlib import Path

import torch

TEXT_MAX_LENGTH = 64
"""Trained text length of SigLIP2 (the processor pads to it)."""

_SPECIALS = ("<pad>", "<eos>", "<bos>", "<unk>", "<mask>")
_TOKEN_IDS = {"pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2}


def build_naflex(
    out_dir: Path,
    seed: int,
    *,
    hidden: int = 32,
    layers: int = 2,
    heads: int = 2,
    intermediate: int = 64,
    num_patches: int = 256,
    patch_size: int = 16,
) -> None:
    """Write a tiny random SigLIP2 NaFlex checkpoint (`model_type` siglip2) into `out_dir`.

    The keyword arguments size the vision and text towers (the benchmark builds a base-size one:
    hidden 768, 12 layers, 12 heads, intermediate 3072).
    """
    from transformers import Siglip2Config, Siglip2ImageProcessor, Siglip2Model, Siglip2Processor

    tokenizer = _tokenizer()
    tower = dict(
        hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=intermediate
    )
    config = Siglip2Config(
        text_config=dict(
            tower,
            vocab_size=len(tokenizer),
            max_position_embeddings=TEXT_MAX_LENGTH,
            projection_size=hidden,
            **_TOKEN_IDS,
        ),
        vision_config=dict(tower, num_patches=num_patches, patch_size=patch_size),
    )
    model = _seeded(Siglip2Model, config, seed)
    image_processor = Siglip2ImageProcessor(patch_size=patch_size, max_num_patches=num_patches)
    _save(out_dir, model, Siglip2Processor(image_processor=image_processor, tokenizer=tokenizer))


def build_fixed(
    out_dir: Path,
    seed: int,
    *,
    hidden: int = 32,
    layers: int = 2,
    heads: int = 2,
    intermediate: int = 64,
    image_size: int = 64,
    patch_size: int = 16,
) -> None:
    """Write a tiny random fixed-size SigLIP checkpoint (`model_type` siglip, square `image_size`)."""
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

    tokenizer = _tokenizer()
    tower = dict(
        hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=intermediate
    )
    config = SiglipConfig(
        text_config=dict(
            tower,
            vocab_size=len(tokenizer),
            max_position_embeddings=TEXT_MAX_LENGTH,
            projection_size=hidden,
            **_TOKEN_IDS,
        ),
        vision_config=dict(tower, image_size=image_size, patch_size=patch_size),
    )
    model = _seeded(SiglipModel, config, seed + 1)
    image_processor = SiglipImageProcessor(size={"height": image_size, "width": image_size})
    _save(out_dir, model, SiglipProcessor(image_processor=image_processor, tokenizer=tokenizer))


def _tokenizer():
    """Gemma-style BPE with byte fallback over a tiny vocabulary, padding/truncating to 64 tokens."""
    from transformers import Siglip2Tokenizer

    vocab: dict[str, int] = {tok: i for i, tok in enumerate(_SPECIALS)}
    for ch in ["▁", *string.ascii_lowercase, *string.digits]:
        vocab.setdefault(ch, len(vocab))
    for byte in range(256):
        vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    return Siglip2Tokenizer(vocab=vocab, merges=[], model_max_length=TEXT_MAX_LENGTH)


def _seeded(model_cls, config, seed: int):
    torch.manual_seed(seed)
    return model_cls(config).eval()


def _save(out_dir: Path, model, processor) -> None:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
