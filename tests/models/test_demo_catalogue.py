"""The tiny VQAScore / ITMScore checkpoints: small, quick to build, loaded by the real loaders without any
transformers warning, with tokenizers that have the real ones' special tokens and chat template."""

from __future__ import annotations

import logging
import time
import warnings

import pytest
import torch

from masc_ui.models.demo import write_demo_weights

NAMES = ("clip-flant5", "qwen2.5-vl", "blip2-itm")


@pytest.mark.parametrize("name", NAMES)
def test_small_and_quick(tmp_path, demo_weights, name):
    write_demo_weights(tmp_path, [name])  # imports warm: time the build itself
    started = time.perf_counter()
    write_demo_weights(tmp_path / "again", [name])
    assert time.perf_counter() - started < 2.0
    size = sum(f.stat().st_size for f in (tmp_path / name).rglob("*") if f.is_file())
    assert size < 5 * 2**20


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_real_loaders_load_them_without_warnings(demo_weights):
    from masc_ui.metrics.vqa.blip2_itm import load_blip2_itm
    from masc_ui.metrics.vqa.chat_vlm import load_chat_vlm_vqa
    from masc_ui.metrics.vqa.clip_flant5 import load_clip_flant5_vqa

    handler = _Records()
    logger = logging.getLogger("transformers")
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for load, name in (
                (load_clip_flant5_vqa, "clip-flant5"),
                (load_chat_vlm_vqa, "qwen2.5-vl"),
                (load_blip2_itm, "blip2-itm"),
            ):
                load(str(demo_weights / name), device="cpu", dtype=torch.float32, what="test")
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in handler.records] == []
    assert [str(w.message) for w in caught if "transformers" in (w.filename or "")] == []


def test_tokenizers_have_the_real_special_tokens(demo_weights):
    from transformers import AutoProcessor, T5Tokenizer

    t5 = T5Tokenizer.from_pretrained(demo_weights / "clip-flant5")
    assert (t5.pad_token_id, t5.eos_token_id, t5.unk_token_id) == (0, 1, 2)
    assert t5.convert_tokens_to_ids("<extra_id_0>") == len(t5) - 1  # 32099 in the real one
    assert t5.convert_tokens_to_ids("<extra_id_99>") == len(t5) - 100
    assert sum(token.startswith("<extra_id_") for token in t5.all_special_tokens) == 100
    assert t5("Yes").input_ids == [t5.convert_tokens_to_ids("▁Yes"), 1]

    qwen = AutoProcessor.from_pretrained(demo_weights / "qwen2.5-vl")
    specials = (
        "<|endoftext|>",
        "<|im_start|>",
        "<|im_end|>",
        "<|vision_start|>",
        "<|vision_end|>",
        "<|image_pad|>",
        "<|video_pad|>",
    )
    ids = [qwen.tokenizer.convert_tokens_to_ids(t) for t in specials]
    assert ids == sorted(ids) and ids[0] > 255 and qwen.tokenizer.eos_token == "<|im_end|>"
    assert qwen.tokenizer.pad_token == "<|endoftext|>"
    assert qwen.tokenizer.encode("<|im_start|>user", add_special_tokens=False)[0] == ids[1]
    assert (
        "You are a helpful assistant." in qwen.chat_template and "<|vision_start|><|image_pad|>" in qwen.chat_template
    )

    bert = AutoProcessor.from_pretrained(demo_weights / "blip2-itm").tokenizer
    assert (bert.pad_token_id, bert.cls_token, bert.sep_token, bert.bos_token) == (0, "[CLS]", "[SEP]", "[DEC]")
    assert bert.convert_ids_to_tokens(bert("A CAT").input_ids) == ["[CLS]", "a", "cat", "[SEP]"]
