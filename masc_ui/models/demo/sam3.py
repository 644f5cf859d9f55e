"""Tiny random SAM 3 (`Sam3Model` + `Sam3Processor`), written with `save_pretrained` like a hub checkpoint.

Every part of the real architecture is there (ViT backbone + FPN, CLIP text encoder, geometry encoder, DETR
encoder/decoder, mask decoder), only narrow and shallow, with a 224-pixel input. The CLIP tokenizer is a
byte-level BPE whose vocabulary is the 256 byte symbols (alone and word-final) and no merges, so any text
tokenizes, one token per byte.
"""

from __future__ import annotations

from pathlib import Path

import torch

IMAGE_SIZE = 224
WIDTH = 32
QUERIES = 8


def build(out_dir: Path, seed: int) -> None:
    """Write a complete tiny SAM 3 checkpoint (~1 MB) into `out_dir`."""
    from transformers import CLIPTokenizer, Sam3Model, Sam3Processor
    from transformers.models.sam3.image_processing_sam3 import Sam3ImageProcessor

    torch.manual_seed(seed)
    tokenizer = CLIPTokenizer(vocab=_byte_vocab(), merges=[])
    model = Sam3Model(_config(len(tokenizer)))
    image_processor = Sam3ImageProcessor(
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        mask_size={"height": IMAGE_SIZE // 4, "width": IMAGE_SIZE // 4},
    )
    model.save_pretrained(out_dir)
    Sam3Processor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out_dir)


def _config(vocab_size: int):
    from transformers import Sam3Config
    from transformers.models.sam3.configuration_sam3 import (
        Sam3DETRDecoderConfig,
        Sam3DETREncoderConfig,
        Sam3GeometryEncoderConfig,
        Sam3MaskDecoderConfig,
        Sam3VisionConfig,
        Sam3ViTConfig,
    )

    small = {"hidden_size": WIDTH, "num_attention_heads": 4, "intermediate_size": 2 * WIDTH}
    backbone = Sam3ViTConfig(
        num_hidden_layers=2,
        image_size=IMAGE_SIZE,
        patch_size=14,
        window_size=8,
        global_attn_indexes=[1],
        pretrain_image_size=IMAGE_SIZE,
        **small,
    )
    grid = IMAGE_SIZE // 14
    vision = Sam3VisionConfig(
        backbone_config=backbone,
        fpn_hidden_size=WIDTH,
        scale_factors=[2.0, 1.0],
        backbone_feature_sizes=[[2 * grid, 2 * grid], [grid, grid]],
    )
    text = {
        "vocab_size": vocab_size,
        "hidden_size": WIDTH,
        "intermediate_size": 2 * WIDTH,
        "projection_dim": WIDTH,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "max_position_embeddings": 32,
        "hidden_act": "gelu",
        "bos_token_id": 0,
        "eos_token_id": 1,
        "pad_token_id": 1,
    }
    return Sam3Config(
        vision_config=vision,
        text_config=text,
        geometry_encoder_config=Sam3GeometryEncoderConfig(num_layers=1, **small),
        detr_encoder_config=Sam3DETREncoderConfig(num_layers=1, **small),
        detr_decoder_config=Sam3DETRDecoderConfig(num_layers=1, num_queries=QUERIES, **small),
        mask_decoder_config=Sam3MaskDecoderConfig(hidden_size=WIDTH, num_upsampling_stages=2),
    )


def _byte_vocab() -> dict[str, int]:
    from tokenizers.pre_tokenizers import ByteLevel

    symbols = sorted(ByteLevel.alphabet())
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for suffix in ("", "</w>"):
        for s in symbols:
            vocab[s + suffix] = len(vocab)
    return vocab
