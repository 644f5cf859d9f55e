"""Tiny random CLIP checkpoints (model + processor), saved with `save_pretrained` and loaded back through the
same `load_pretrained` path as `openai/clip-vit-base-patch32` and PickScore. Their numbers mean nothing.

- `build_clip`: CLIP-B/32-shaped (patch 32, 224 px, text length 77), tiny widths.
- `build_clip_h`: PickScore-shaped, i.e. CLIP-ViT-H-14-style (patch 14, 224 px, GELU, text length 77,
  `logit_scale.exp()` = 100, the value PickScore was trained to), tiny widths;
  the folder holds both the model and the processor (PickScore reads its processor from the CLIP-H repo).

The tokenizer is a real CLIP byte-level BPE tokenizer built locally: a vocabulary of the 256 byte symbols
(each alone and with the end-of-word suffix `</w>`), a few merges, and CLIP's special tokens last.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

TEXT_LENGTH = 77
PROJECTION_DIM = 16
"""Width of the tiny CLIPs' projected embeddings (what the demo aesthetic head reads)."""
_MERGES = ["t h", "h e</w>", "o n</w>", "i n", "o f</w>", "th e</w>", "in g</w>"]


def build_clip(out_dir: Path, seed: int) -> None:
    """Write a tiny random CLIP-B/32-shaped checkpoint + processor into `out_dir`."""
    _build(
        out_dir, seed, patch_size=32, hidden_act="quick_gelu", pad_token="<|endoftext|>", logit_scale=math.log(1 / 0.07)
    )


def build_clip_h(out_dir: Path, seed: int) -> None:
    """Write a tiny random PickScore-shaped (CLIP-ViT-H-14-style) checkpoint + processor into `out_dir`."""
    _build(out_dir, seed, patch_size=14, hidden_act="gelu", pad_token="!", logit_scale=math.log(100.0))


def build_tokenizer(pad_token: str = "<|endoftext|>"):
    """A CLIP BPE tokenizer over the byte alphabet; `<|startoftext|>`/`<|endoftext|>` are the last two ids."""
    from transformers import CLIPTokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = list(bytes_to_unicode().values())
    tokens = symbols + [s + "</w>" for s in symbols]
    tokens += ["".join(m.split()) for m in _MERGES]
    vocab = {tok: i for i, tok in enumerate(dict.fromkeys(tokens))}
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    merges = [tuple(m.split()) for m in _MERGES]
    return CLIPTokenizer(vocab=vocab, merges=merges, pad_token=pad_token, model_max_length=TEXT_LENGTH)


def _build(out_dir: Path, seed: int, *, patch_size: int, hidden_act: str, pad_token: str, logit_scale: float) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    tokenizer = build_tokenizer(pad_token)
    ids = {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    config = CLIPConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            max_position_embeddings=TEXT_LENGTH,
            hidden_act=hidden_act,
            projection_dim=PROJECTION_DIM,
            **ids,
        ),
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=224,
            patch_size=patch_size,
            hidden_act=hidden_act,
            projection_dim=PROJECTION_DIM,
        ),
        projection_dim=PROJECTION_DIM,
        logit_scale_init_value=logit_scale,
    )
    torch.manual_seed(seed)
    model = CLIPModel(config).eval()
    model.save_pretrained(out_dir)
    image_processor = CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224})
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out_dir)
