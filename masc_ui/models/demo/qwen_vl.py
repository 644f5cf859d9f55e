"""A tiny random Qwen2.5-VL-style chat VLM (model + processor + chat template), saved with `save_pretrained` and
loaded back through `AutoModelForImageTextToText` / `AutoProcessor` like `Qwen/Qwen2.5-VL-7B-Instruct`. Its
numbers mean nothing.

Same architecture as the real one (`Qwen2_5_VLForConditionalGeneration`: windowed ViT with 14 px patches merged
2x2, M-RoPE text decoder), tiny widths (vision 32, text 64, 2 layers each). The processor is Qwen2.5-VL's: the
image processor with the real mean/std and patching but `max_pixels` 12544 (at most 16 image tokens, so that
demo forwards are fast; the real one allows 12845056), and a byte-level BPE tokenizer of the 256 byte symbols with
a few merges ("Yes" and "No" are single tokens, as in Qwen's vocabulary) followed by Qwen2's special tokens, with
Qwen2.5-VL's chat template (default system message "You are a helpful assistant.").
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
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
)
"""Qwen2's special tokens, in their vocabulary order (ids 151643.. in the real tokenizer)."""
CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "<|im_end|>\n{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' or 'image' in "
    "content or 'image_url' in content %}{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}"
    "Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] "
    "== 'video' or 'video' in content %}{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}"
    "Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>{% elif 'text' in content "
    "%}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}"
    "<|im_start|>assistant\n{% endif %}"
)
"""Qwen2.5-VL-Instruct's chat template, as published in its chat_template.json."""
MERGES = (
    "Y e",
    "Ye s",
    "N o",
    "Ġ a",
    "Ġ t",
    "h e",
    "Ġt he",
    "o n",
    "i n",
    "Ġ f",
    "Ġ s",
    "Ġ p",
    "o r",
    "i s",
    "a s",
    "s i",
    "s t",
    "Ġ o",
    "Ġ c",
    "Ġ Y",
    "Ġ N",
    "Ġ D",
    "D o",
    "Do e",
    "Doe s",
)
IMAGE_MEAN = (0.48145466, 0.4578275, 0.40821073)
IMAGE_STD = (0.26862954, 0.26130258, 0.27577711)
MAX_PIXELS = 28 * 28 * 16
MIN_PIXELS = 56 * 56
TEXT = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]},
)
"""The tiny language model (head width 16; M-RoPE sections sum to half of it, as [16, 24, 24] for 128)."""
VISION = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, fullatt_block_indexes=[1])


def build_tokenizer():
    """A Qwen2 byte-level BPE tokenizer: byte symbols, `MERGES`, then `SPECIAL_TOKENS`; eos `<|im_end|>`, pad
    `<|endoftext|>` (as Qwen2.5-VL-Instruct's tokenizer_config)."""
    from transformers import Qwen2Tokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    tokens = list(bytes_to_unicode().values()) + ["".join(m.split()) for m in MERGES] + list(SPECIAL_TOKENS)
    vocab = {token: i for i, token in enumerate(dict.fromkeys(tokens))}  # specials last, in Qwen's order
    tokenizer = Qwen2Tokenizer(
        vocab=vocab,
        merges=[tuple(m.split()) for m in MERGES],
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        model_max_length=32768,
        errors="replace",
    )
    tokenizer.add_tokens(list(SPECIAL_TOKENS), special_tokens=True)
    return tokenizer


def build(
    out_dir: Path,
    seed: int,
    *,
    text: dict | None = None,
    vision: dict | None = None,
    max_pixels: int = MAX_PIXELS,
    vocab_size: int | None = None,
) -> None:
    """Write the tiny Qwen2.5-VL-style model and its processor into `out_dir`; `text` / `vision` override the
    widths (`TEXT`, `VISION`), e.g. for the benchmark's base-size checkpoint."""
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessorPil,
        Qwen2VLVideoProcessor,
    )

    tokenizer = build_tokenizer()
    ids = {
        name: tokenizer.convert_tokens_to_ids(token)
        for name, token in (
            ("image_token_id", "<|image_pad|>"),
            ("video_token_id", "<|video_pad|>"),
            ("vision_start_token_id", "<|vision_start|>"),
            ("vision_end_token_id", "<|vision_end|>"),
        )
    }
    text_config = {**TEXT, **(text or {})}
    text_config |= dict(
        vocab_size=vocab_size or (len(tokenizer) // 64 + 1) * 64,
        max_position_embeddings=2048,
        rope_theta=1000000.0,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=None,
        tie_word_embeddings=False,
    )
    vision_config = {**VISION, **(vision or {})}
    vision_config |= dict(
        out_hidden_size=text_config["hidden_size"],
        patch_size=14,
        spatial_merge_size=2,
        temporal_patch_size=2,
        window_size=112,
    )
    config = Qwen2_5_VLConfig(text_config=text_config, vision_config=vision_config, **ids)
    torch.manual_seed(seed)
    Qwen2_5_VLForConditionalGeneration(config).eval().save_pretrained(out_dir)
    image_processor = Qwen2VLImageProcessorPil(
        image_mean=list(IMAGE_MEAN),
        image_std=list(IMAGE_STD),
        min_pixels=MIN_PIXELS,
        max_pixels=max_pixels,
        patch_size=14,
        temporal_patch_size=2,
        merge_size=2,
    )
    video_processor = Qwen2VLVideoProcessor(
        image_mean=list(IMAGE_MEAN), image_std=list(IMAGE_STD), min_pixels=MIN_PIXELS, max_pixels=max_pixels
    )
    Qwen2_5_VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
    ).save_pretrained(out_dir)
