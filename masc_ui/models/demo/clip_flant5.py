"""A tiny random CLIP-FlanT5 saved the way `zhiqiulin/clip-flant5-xxl` is: config.json with `model_type` clip_t5
and the `mm_*` fields, weights as `pytorch_model-0000k-of-00002.bin` shards under the released keys (aliases of
the tied embedding included) with `pytorch_model.bin.index.json`. It loads through the same
`ClipFlanT5.from_pretrained` as the real checkpoints. Its numbers mean nothing.

Differences from the release, all in size: FlanT5 width 32 (2 + 2 layers), a CLIP vision tower of width 32 and
3 layers at 336 px with 48 px patches (49 patch tokens instead of 576), and a FlanT5-style tokenizer of ~150 pieces
(+ the 100 `<extra_id_*>` sentinels) in the folder itself. `mm_vision_tower` is `vision_tower`, a folder inside
the checkpoint holding a CLIP config and the `preprocessor_config.json` of `openai/clip-vit-large-patch14-336`
(resize 336 bicubic, centre crop 336, CLIP mean/std).
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import torch

CONFIG_EXTRAS = {
    "model_type": "clip_t5",
    "architectures": ["CLIPT5ForConditionalGeneration"],
    "mm_vision_tower": "vision_tower",
    "mm_projector_type": "mlp2x_gelu",
    "mm_vision_select_layer": -2,
    "mm_vision_select_feature": "patch",
    "image_aspect_ratio": "pad",
    "use_mm_proj": True,
    "mm_use_im_start_end": False,
    "mm_use_im_patch_token": False,
    "tune_mm_mlp_adapter": False,
    "freeze_mm_mlp_adapter": False,
    "image_grid_pinpoints": None,
    "torch_dtype": "bfloat16",
    "use_cache": True,
}
"""The `mm_*` and bookkeeping fields of the released config.json (values of the release, except the tower)."""
PREPROCESSOR = {
    "crop_size": 336,
    "do_center_crop": True,
    "do_normalize": True,
    "do_resize": True,
    "feature_extractor_type": "CLIPFeatureExtractor",
    "image_mean": [0.48145466, 0.4578275, 0.40821073],
    "image_std": [0.26862954, 0.26130258, 0.27577711],
    "resample": 3,
    "size": 336,
}
"""`openai/clip-vit-large-patch14-336`'s preprocessor_config.json, as published."""
WORDS = (
    "A chat between a curious user and an artificial intelligence assistant . The gives helpful , detailed "
    "polite answers to the 's questions USER : ASSISTANT Does this figure show ? Please answer yes or no Yes "
    "No photo of cat dog on beach red blue"
).split()
WIDTH = 32
EXTRA_IDS = 100
ROW_MULTIPLE = 128
"""The released T5 has 32128 embedding rows (a multiple of 128) for 32100 tokenizer entries; the tiny one keeps
such a surplus, which the loader cuts as t2v_metrics does."""


def build_tokenizer():
    """A FlanT5-style Unigram tokenizer: `<pad>`=0, `</s>`=1, `<unk>`=2, pieces, then `<extra_id_99>` ..
    `<extra_id_0>` (the last id, as 32099 in the real one); `</s>` appended to every encoded text."""
    from transformers import T5Tokenizer

    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -3.0)]
    pieces += [(f"▁{w}", -2.0) for w in dict.fromkeys(WORDS)]
    chars = string.ascii_letters + string.digits + string.punctuation
    pieces += [(c, -6.0) for c in chars] + [(f"▁{c}", -5.0) for c in chars]
    pieces = list(dict(pieces).items()) + [(f"<extra_id_{i}>", 0.0) for i in reversed(range(EXTRA_IDS))]
    return T5Tokenizer(vocab=pieces, extra_ids=EXTRA_IDS, model_max_length=512)


def build(out_dir: Path, seed: int) -> None:
    """Write the tiny CLIP-FlanT5 (released layout, tokenizer, vision-tower folder) into `out_dir`."""
    from transformers import CLIPConfig, CLIPVisionModel

    from ..nets.clip_flant5 import (
        ClipFlanT5,
        ClipFlanT5Spec,
        build_projector,
        flan_t5,
        released_state_dict,
        t5_config_from,
    )

    out_dir = Path(out_dir)
    tokenizer = build_tokenizer()
    tokenizer.save_pretrained(out_dir)
    rows = (len(tokenizer) // ROW_MULTIPLE + 1) * ROW_MULTIPLE
    t5_fields = dict(
        vocab_size=rows,
        d_model=WIDTH,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=32,
        relative_attention_max_distance=128,
        dropout_rate=0.1,
        layer_norm_epsilon=1e-6,
        initializer_factor=1.0,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=False,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        is_encoder_decoder=True,
    )
    t5_config = t5_config_from(t5_fields)
    clip_config = CLIPConfig(
        text_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2),
        vision_config=dict(
            hidden_size=WIDTH,
            intermediate_size=64,
            num_hidden_layers=3,
            num_attention_heads=2,
            image_size=336,
            patch_size=48,
            hidden_act="quick_gelu",
        ),
        projection_dim=16,
    )
    vision_dir = out_dir / "vision_tower"
    clip_config.save_pretrained(vision_dir)
    (vision_dir / "preprocessor_config.json").write_text(json.dumps(PREPROCESSOR, indent=2))
    spec = ClipFlanT5Spec(vision_tower="vision_tower", mm_hidden_size=WIDTH)
    torch.manual_seed(seed)
    model = ClipFlanT5(
        flan_t5(t5_config), CLIPVisionModel(clip_config.vision_config), build_projector(spec, WIDTH), spec
    )
    config = {**t5_fields, **CONFIG_EXTRAS, "mm_hidden_size": WIDTH}
    (out_dir / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True))
    _save_sharded(released_state_dict(model), out_dir)


def _save_sharded(state: dict[str, torch.Tensor], out_dir: Path) -> None:
    """Two torch shards + index, as transformers 4.31's `save_pretrained` wrote them: the language model (with
    its tied aliases, one storage) in the first, the vision tower and projector in the second."""
    vision = {k: v for k, v in state.items() if k.startswith(("vision_tower.", "mm_projector."))}
    shards = [{k: v for k, v in state.items() if k not in vision}, vision]
    names = [f"pytorch_model-{i + 1:05d}-of-{len(shards):05d}.bin" for i in range(len(shards))]
    weight_map = {}
    for name, shard in zip(names, shards):
        torch.save({k: v.detach().contiguous() for k, v in shard.items()}, out_dir / name)
        weight_map |= {k: name for k in shard}
    total = sum(
        v.numel() * v.element_size()
        for k, v in state.items()
        if k != "embed_tokens.weight" and not k.endswith(".embed_tokens.weight")
    )
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    (out_dir / "pytorch_model.bin.index.json").write_text(json.dumps(index, indent=2))
