"""A tiny random GME-Qwen2-VL checkpoint (model + processor), shaped like `Alibaba-NLP/gme-Qwen2-VL-2B-Instruct`
and saved in that release's file layout (`Qwen2VLForConditionalGeneration` weights `model.*` / `visual.*`, tied word
embeddings as the 2B has, a Qwen2-VL image processor, a byte-level BPE tokenizer with Qwen2-VL's special tokens and
chat template). Loaded back through the same code as the real weights. Its numbers mean nothing.

The tokenizer is built with the `tokenizers` library the way Qwen2's is: NFC normalization, Qwen2's split regex,
byte-level BPE over the 256 byte symbols with a few merges, then the special tokens after the regular vocabulary.
"""

from __future__ import annotations

from pathlib import Path

import torch

SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+"
)
CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen2-VL-Instruct's chat template (the one GME checkpoints ship)."""
_MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("a", "n"), ("Ġ", "a"), ("o", "f"), ("Ġ", "o")]


def build_tokenizer():
    """A Qwen2-style byte-level BPE tokenizer wrapped as transformers' `Qwen2Tokenizer`."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
    from transformers import Qwen2Tokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = list(bytes_to_unicode().values())
    vocab = {tok: i for i, tok in enumerate(dict.fromkeys(symbols + ["".join(m) for m in _MERGES]))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=list(_MERGES), byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    return Qwen2Tokenizer(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        errors="replace",
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
        split_special_tokens=False,
    )


def build(out_dir: Path, seed: int) -> None:
    """Write the tiny GME-Qwen2-VL checkpoint + processor into `out_dir`."""
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    tokenizer = build_tokenizer()
    ids = {
        name: tokenizer.convert_tokens_to_ids(tok)
        for name, tok in (
            ("image_token_id", "<|image_pad|>"),
            ("video_token_id", "<|video_pad|>"),
            ("vision_start_token_id", "<|vision_start|>"),
            ("vision_end_token_id", "<|vision_end|>"),
        )
    }
    config = Qwen2VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=4096,
            rms_norm_eps=1e-6,
            bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
            rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 1_000_000.0},
            tie_word_embeddings=True,
        ),
        vision_config=dict(
            depth=2,
            embed_dim=32,
            hidden_size=32,
            num_heads=2,
            mlp_ratio=2,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            in_channels=3,
        ),
        tie_word_embeddings=True,
        **ids,
    )
    torch.manual_seed(seed)
    Qwen2VLForConditionalGeneration(config).eval().save_pretrained(out_dir)
    image_processor = Qwen2VLImageProcessor(
        min_pixels=4 * 28 * 28, max_pixels=16384 * 28 * 28, patch_size=14, merge_size=2, temporal_patch_size=2
    )
    video_processor = Qwen2VLVideoProcessor(
        min_pixels=128 * 28 * 28, max_pixels=768 * 28 * 28, patch_size=14, merge_size=2, temporal_patch_size=2
    )
    Qwen2VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
    ).save_pretrained(out_dir)
