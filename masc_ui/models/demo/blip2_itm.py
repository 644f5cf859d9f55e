"""A tiny random BLIP-2 image-text matching model (`Blip2ForImageTextRetrieval` + `Blip2Processor`), saved with
`save_pretrained` and loaded back like `Salesforce/blip2-itm-vit-g`. Its numbers mean nothing.

Same architecture (ViT with a post-LayerNorm, Q-Former with 32 learned queries cross-attending every other layer,
ITM head), tiny widths (vision 32 with 32 px patches at 224 px, Q-Former 32, 2 layers). The processor is the
real one's: 224 x 224 bicubic resize (squashed), CLIP mean/std, and a lower-casing BERT WordPiece tokenizer with
BERT's special tokens and LAVIS' `[DEC]` bos token, over ~100 word pieces and the ASCII characters.
"""

from __future__ import annotations

import string
from pathlib import Path

import torch

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, patch_size=32)
QFORMER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
WORDS = (
    "a an the of on in at with and photo picture cat dog red blue green beach table sand sunset snow forest "
    "kitchen space painting style city street giant next to made glass oil museum watercolor toy robot "
    "sneaker backpack teapot kitten"
).split()


def build_tokenizer():
    """BERT-uncased-style WordPiece: `[PAD]`=0, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`, words, characters and their
    `##` continuations, then `[DEC]` (LAVIS' bos for the Q-Former's text decoder)."""
    from transformers import BertTokenizer

    chars = string.ascii_lowercase + string.digits + string.punctuation
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *chars, *(f"##{c}" for c in chars)]
    vocab = {token: i for i, token in enumerate(dict.fromkeys(tokens))}
    tokenizer = BertTokenizer(vocab=vocab, do_lower_case=True, model_max_length=512)
    tokenizer.add_special_tokens({"bos_token": "[DEC]"})
    return tokenizer


def build(out_dir: Path, seed: int, *, vision: dict | None = None, qformer: dict | None = None) -> None:
    """Write the tiny BLIP-2 ITM model and its processor into `out_dir`; `vision` / `qformer` override the widths
    (`VISION`, `QFORMER`), e.g. for the benchmark's base-size checkpoint."""
    from transformers import Blip2Config, Blip2ForImageTextRetrieval, Blip2Processor, BlipImageProcessorPil

    tokenizer = build_tokenizer()
    vision_config = {**VISION, **(vision or {}), "image_size": 224}
    config = Blip2Config(
        vision_config=vision_config,
        qformer_config={
            **QFORMER,
            **(qformer or {}),
            "vocab_size": len(tokenizer) + 1,
            "encoder_hidden_size": vision_config["hidden_size"],
            "max_position_embeddings": 512,
            "cross_attention_frequency": 2,
            "use_qformer_text_input": True,
        },
        text_config=dict(
            model_type="opt",
            vocab_size=64,
            hidden_size=16,
            ffn_dim=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            word_embed_proj_dim=16,
        ),
        num_query_tokens=32,
        image_text_hidden_size=16,
    )
    torch.manual_seed(seed)
    Blip2ForImageTextRetrieval(config).eval().save_pretrained(out_dir)
    image_processor = BlipImageProcessorPil(
        size={"height": 224, "width": 224},
        resample=3,
        image_mean=list(CLIP_MEAN),
        image_std=list(CLIP_STD),
        do_convert_rgb=True,
    )
    Blip2Processor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out_dir)
